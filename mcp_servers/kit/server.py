"""`Server`: the registry of a bundled MCP server's tools and watchers, and its entry point.

A server module builds one `Server`, decorates its functions with `@server.tool(...)` and
`@server.watcher(...)`, and calls `server.run()` from `main()`. The `Server` knows nothing
about framing: transports (`stdio`, `http`) open a `Session` per client and feed it
messages. Watchers belong to the server, not to a session, so there is one poll loop per
process however many HTTP clients connect; their notifications go to every session that
finished the handshake.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import re
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from .modern import STATELESS_PROTOCOLS
from .session import Session, Sink
from .tool import Tool
from .watchers import Watcher, WatchFunction

logger = logging.getLogger(__name__)

DEFAULT_WATCH_INTERVAL = 600.0
# Set by a bothost host that carries this server's position between hosts (its handover)
HOST_STATE_DIR = "BOTHOST_STATE_DIR"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# On stdio the client reads stderr and stamps each line as it logs it (bothost's server
# log does): a time of our own showed twice in `bothost mcp logs`
STDIO_LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"


class Server:
    """One MCP server: its identity, tools and watchers."""

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        instructions: str | None = None,
        title: str | None = None,
    ) -> None:
        self.name = name
        self.version = version
        self.instructions = instructions
        self.title = title
        self.tools: dict[str, Tool] = {}
        self.watchers: list[Watcher] = []
        self.sessions: list[Session] = []
        self._watcher_tasks: list[asyncio.Task[None]] = []
        self._shutdown: list[Callable[[], Awaitable[None]]] = []

    # declaring ----------------------------------------------------------------------

    def tool(
        self,
        *,
        capabilities: dict[str, Any],
        annotations: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        name: str | None = None,
        description: str | None = None,
        title: str | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register the decorated function as a tool (see `bothost.mcp_servers.kit`)."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            tool = Tool.from_function(
                fn,
                capabilities=capabilities,
                annotations=annotations,
                output_schema=output_schema,
                name=name,
                description=description,
                title=title,
            )
            if tool.name in self.tools:
                raise ValueError(f"server {self.name!r} already has a tool {tool.name!r}")
            self.tools[tool.name] = tool
            return fn

        return register

    def watcher(
        self, *, interval_env: str | None = None, default_interval: float = DEFAULT_WATCH_INTERVAL
    ) -> Callable[[WatchFunction], WatchFunction]:
        """Register `async def fn(server)` to run at start-up and then every interval."""

        def register(fn: WatchFunction) -> WatchFunction:
            self.watchers.append(Watcher(fn, interval_env, default_interval))
            return fn

        return register

    def on_shutdown(self, fn: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
        """Register `async def fn()` to run when the server stops (close sessions, files)."""
        self._shutdown.append(fn)
        return fn

    # protocol hooks -----------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"name": self.name, "version": self.version}
        if self.title:
            info["title"] = self.title
        return info

    def capabilities(self) -> dict[str, Any]:
        return {"tools": {"listChanged": False}, "logging": {}}

    def initialize_result(self, protocol_version: str) -> dict[str, Any]:
        result: dict[str, Any] = {
            "protocolVersion": protocol_version,
            "capabilities": self.capabilities(),
            "serverInfo": self.info(),
        }
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    def discover_result(self) -> dict[str, Any]:
        """``server/discover`` (2026-07-28); the session adds our info to its ``_meta``."""
        result: dict[str, Any] = {
            "supportedVersions": list(STATELESS_PROTOCOLS),
            "capabilities": self.capabilities(),
            "ttlMs": 0,  # a restarted server may be another version: ask each time
            "cacheScope": "public",  # nothing in it depends on who asks
        }
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    def open_session(self, sink: Sink) -> Session:
        session = Session(self, sink)
        self.sessions.append(session)
        return session

    def close_session(self, session: Session) -> None:
        session.close()
        if session in self.sessions:
            self.sessions.remove(session)

    def session_ready(self, session: Session) -> None:
        """Called on `notifications/initialized`, and as a 2026-07-28 client opens a listen
        stream; the first one starts the watchers."""
        if self.watchers and not self._watcher_tasks:
            for watcher in self.watchers:
                task = asyncio.get_running_loop().create_task(watcher.run_forever(self))
                self._watcher_tasks.append(task)

    async def stop(self) -> None:
        """Stop the watchers and every session's running requests."""
        for task in self._watcher_tasks:
            task.cancel()
        await asyncio.gather(*self._watcher_tasks, return_exceptions=True)
        self._watcher_tasks.clear()
        for session in list(self.sessions):
            self.close_session(session)
        for fn in self._shutdown:
            try:
                await fn()
            except Exception:  # boundary: every cleanup gets its turn
                logger.exception("shutdown callback %s failed", getattr(fn, "__name__", fn))

    # pushing ------------------------------------------------------------------------

    async def notify(self, method: str, params: dict[str, Any]) -> int:
        """Send a notification to every ready client; returns how many got it.

        `event/*` goes only to clients that declared `EVENTS_CAPABILITY` (at initialize, or
        on a 2026-07-28 listen stream's request). A client that cannot receive it (over
        HTTP: one without an open GET stream) does not count: watchers record an event as
        sent only when this is above zero (see `Outbox`), so an event nobody asked for
        waits for a client that does.
        """
        event = method.startswith("event/")
        got = 0
        # one pass over a snapshot (a session may close while we wait), no filtered lists: a
        # watcher's burst calls this once per event
        for session in tuple(self.sessions):
            if session.initialized.is_set() and (not event or session.wants_events):
                got += await session.notify(method, params)
            if session.listeners:
                got += await session.notify_listeners(method, params)
        if not got:
            ready = [s for s in self.sessions if s.initialized.is_set()]
            if event:
                ready = [s for s in ready if s.wants_events]
            listening = sum(len(s.listeners) for s in self.sessions)
            logger.info(
                "no client could receive %s (%d connected, %d listening)",
                method,
                len(ready),
                listening,
            )
        return got

    async def log(self, level: str, message: Any) -> None:
        """`notifications/message` to every ready client (each applies its own level)."""
        for session in [s for s in self.sessions if s.initialized.is_set()]:
            await session.log(level, message, logger_name=self.name)

    # places -------------------------------------------------------------------------

    def state_dir(self) -> Path:
        """Directory (0700) where watchers keep their position across restarts.

        `$<NAME>_STATE_DIR` when set, else `$BOTHOST_STATE_DIR` (the directory a host gives
        a server whose position it carries to the next leader host), else
        `$BOTHOST_HOME/state/<name>/` (BOTHOST_HOME defaulting to ~/.bothost).
        """
        env_name = re.sub(r"[^A-Za-z0-9]", "_", self.name).upper() + "_STATE_DIR"
        if os.environ.get(env_name):
            path = Path(os.environ[env_name]).expanduser()
        elif os.environ.get(HOST_STATE_DIR):
            path = Path(os.environ[HOST_STATE_DIR]).expanduser()
        else:
            home = Path(os.environ.get("BOTHOST_HOME") or "~/.bothost").expanduser()
            path = home / "state" / self.name
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.chmod(0o700)
        return path

    # running ------------------------------------------------------------------------

    def run(self, argv: Sequence[str] | None = None) -> None:
        """Command-line entry point: stdio by default, `--http HOST:PORT` for HTTP."""
        args = self._parse_args(argv)
        form = LOG_FORMAT if args.http else STDIO_LOG_FORMAT
        logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(), format=form)
        if args.http:
            from .http import serve_http

            host, port = args.http
            main = serve_http(self, host, port, extra_hosts=args.allow_host)
        else:
            from .stdio import serve_stdio

            main = serve_stdio(self)
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_until_terminated(main))

    def _parse_args(self, argv: Sequence[str] | None) -> argparse.Namespace:
        parser = argparse.ArgumentParser(
            prog=f"bothost-mcp-{self.name}",
            description=f"The {self.name} MCP server (stdio unless --http is given).",
        )
        parser.add_argument(
            "--http",
            metavar="HOST:PORT",
            type=_host_port,
            help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio",
        )
        parser.add_argument(
            "--allow-host",
            action="append",
            default=[],
            metavar="HOST[:PORT]",
            help="extra Host/Origin value accepted in --http mode (repeatable)",
        )
        parser.add_argument(
            "--log-level",
            default=os.environ.get("BOTHOST_MCP_LOG_LEVEL", "info"),
            choices=["debug", "info", "warning", "error"],
            help="stderr log level",
        )
        return parser.parse_args(argv)


async def _until_terminated(main: Awaitable[None]) -> None:
    """Run `main`; SIGTERM (how the host stops servers) cancels it so cleanup still runs."""
    task = asyncio.ensure_future(main)
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await task


def _host_port(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)
