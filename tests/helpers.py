"""Building a host for a test: a config file in a temp dir, the real plugin loading."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from bothost.hooks.discovery import load_plugins, new_plugin_manager
from bothost.host.config_load import load  # every check a command makes
from bothost.host.host import Host

QUIET = {
    "platforms": {"web": {"port": 0}, "console": {"enabled": False}},
    "mcp": {"servers": {"weather": {"enabled": False}}},
}


def deep(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = deep(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def write_config(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(deep(QUIET, data)))
    return path


# config lines for a command that should start only what it needs: the web chat on any free
# port, the bundled weather server off
ONLY_WEB = "platforms: {web: {port: 0}}\nmcp: {servers: {weather: {enabled: false}}}\n"


def plugin_config(tmp_path: Path, plugins: dict[str, str], extra: str = "") -> Path:
    """A config file whose plugin folder holds ``plugins`` (file name → source), followed by
    the YAML lines of ``extra``."""
    folder = tmp_path / "plugins"
    folder.mkdir(exist_ok=True)
    for name, source in plugins.items():
        (folder / name).write_text(source, "utf-8")
    config = tmp_path / "bothost.yaml"
    config.write_text(f"plugins: {{dirs: [{folder}]}}\n{extra}", "utf-8")
    return config


def make_host(
    home: Path, data: dict[str, Any] | None = None, plugins: list[Any] | None = None
) -> Host:
    """A host on the config `data`, with the first-party plugins and `plugins` (objects with
    hook implementations, registered before the host collects what they register)."""
    config_file = write_config(home.parent / "test-config.yaml", data or {})
    config = load(config_file, home)
    pm = new_plugin_manager()
    load_plugins(pm, config.plugins.dirs, config.plugins.disabled)
    for plugin in plugins or []:
        pm.register(plugin)
    return Host(config, home, pm)


async def until(predicate, timeout: float = 10.0) -> None:
    """Wait (bounded) until ``predicate()`` holds, polling briefly."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


async def serve_app(
    app: web.Application, host: str = "127.0.0.1", **runner_options: Any
) -> tuple[web.AppRunner, str]:
    """Serve ``app`` on a free port of ``host``; the runner (``await runner.cleanup()`` stops
    it) and the base URL, ``http://HOST:PORT``."""
    runner = web.AppRunner(app, **runner_options)
    await runner.setup()
    await web.TCPSite(runner, host, 0).start()
    bound, port = runner.addresses[0][:2]
    return runner, f"http://{bound}:{port}"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for servers that need a number)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


COMMAND_SECONDS = 120.0  # one CLI command to its end on a loaded 2-core machine


def run_bothost(
    *args: str,
    home: Path | None = None,
    config: Path | str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = COMMAND_SECONDS,
    text: bool = True,
    prefix: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[Any]:
    """``python -m bothost [--home HOME] [--config CONFIG] ARGS`` run to its end as a person
    runs it from a script (no stdin, output captured); ``env`` replaces this process's
    environment, ``prefix`` goes before the interpreter (e.g. setpriv)."""
    argv = [*prefix, sys.executable, "-m", "bothost"]
    if home is not None:
        argv += ["--home", str(home)]
    if config is not None:
        argv += ["--config", str(config)]
    return subprocess.run(
        [*argv, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=text,
        timeout=timeout,
        env=env,
    )


async def bothost_process(
    home: Path,
    config: Path,
    *args: str,
    stdout: Any = asyncio.subprocess.PIPE,
    stdin: Any = asyncio.subprocess.DEVNULL,
    stderr: Any = asyncio.subprocess.PIPE,
    without: tuple[str, ...] = (),
    **env: str,
) -> asyncio.subprocess.Process:
    """``python -m bothost --config CONFIG ARGS`` with ``home`` as its home, as a person
    starts it (no stdin, stderr piped unless asked otherwise); its environment is this
    process's without the names in ``without``, with ``env`` added."""
    inherited = {k: v for k, v in os.environ.items() if k not in without}
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bothost",
        "--config",
        str(config),
        *args,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        env={**inherited, "BOTHOST_HOME": str(home), **env},
    )


MCP_PROTOCOL = "2025-11-25"  # the protocol version the test clients ask for


def initialize_params(client: str = "test") -> dict[str, Any]:
    """The params of the MCP ``initialize`` request a plain client opens with."""
    return {
        "protocolVersion": MCP_PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": client, "version": "0"},
    }


def initialize_request(client: str = "test", request_id: int = 1) -> dict[str, Any]:
    """The MCP ``initialize`` request, as one JSON-RPC message."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": initialize_params(client),
    }


def age_lease(store: Any, name: str, seconds: float) -> None:
    """Bring the lease ``name`` ``seconds`` nearer its end on PostgreSQL, where leases expire
    by the server's clock, as a test's injected clock moved forward as far does on SQLite
    (there nothing is written: the clock is what moves)."""
    if store.dialect == "postgresql":
        store.call(
            lambda db: db.execute(
                "UPDATE locks SET expires_at = expires_at - ? WHERE name = ?", (seconds, name)
            )
        )


class FakeTime:
    """An injected clock and sleep for retry tests: a wait moves the clock at once, and is
    recorded in ``waits`` (so a test asserts what was waited, never waits it)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


def each(on_event: Any) -> Any:
    """An MCP ``on_events([Event, …])`` that calls ``on_event(source, type, payload)`` for
    each event in turn (a test that records events one at a time)."""

    async def on_events(events: list[Any]) -> None:
        for event in events:
            await on_event(event.source, event.type, event.payload)

    return on_events


# The event queue has one way in, ``EventQueue.ingest(events, once_id)``, giving one outcome
# per event; these read like the single-event calls the queue tests make.


async def ingest_one(queue: Any, event: Any) -> Any:
    """One event through the queue: its row id or None; raises what kept it out."""
    (outcome,) = await queue.ingest([event])
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


async def ingest_all(queue: Any, events: Any) -> list[Any]:
    """Several events through the queue as one batch: their row ids (or None); every event
    settles first, then the first error, if any, is raised."""
    outcomes = await queue.ingest(list(events))
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    return outcomes


async def ingest_once(queue: Any, event: Any, once_id: str) -> Any:
    """One event sent with a once-only id: its :class:`~bothost.api.Receipt`."""
    from bothost.api import Receipt

    (outcome,) = await queue.ingest([event], once_id)
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome if isinstance(outcome, Receipt) else Receipt(event_id=outcome)
