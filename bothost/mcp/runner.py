"""One MCP server under the host's care: connect, watch, restart with backoff, stop.

A :class:`ServerRunner` owns one server's connection for the manager. Its loop connects
(stdio process or HTTP endpoint), lists the tools, then waits for the connection to end;
a failure to start and a death alike are recorded with their reason and retried after a
backoff that starts at 1 s and doubles to 60 s (reset once a run has lasted a while), so
one broken server keeps trying without holding up the others.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bothost import redact
from bothost.config import McpServerConfig
from bothost.config.check import address_problem
from bothost.mcp import jsonrpc
from bothost.mcp.content import CallResult
from bothost.mcp.deadline import DEFAULT_MAX_TIMEOUT
from bothost.mcp.environment import (
    ServerAddressError,
    UnsetVariableError,
    server_env,
    server_headers,
    server_url,
)
from bothost.mcp.executables import resolve_command
from bothost.mcp.handover import BARRIER_TIMEOUT, StateKeeper
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.oauth.tokens import TokenStore, wait_for_change
from bothost.mcp.placement import STANDBY
from bothost.mcp.roots import as_roots
from bothost.mcp.serverlog import server_logger, set_level
from bothost.mcp.subscriptions import Subscriptions
from bothost.mcp.transport import TransportError

if TYPE_CHECKING:
    from bothost.mcp.oauth.auth import OAuth
    from bothost.mcp.session import ClientSession

logger = logging.getLogger(__name__)

BACKOFF_START = 1.0  # DESIGN: retry after 1 s, doubling…
BACKOFF_MAX = 60.0  # …up to 60 s
STABLE_AFTER = 60.0  # a run this long resets the backoff: the next death is a fresh problem
START_WAIT = 30.0  # how long a call waits for a server that is still starting
# Start failures that are the server's or the config's fault: recorded, not traced.
EXPECTED = (McpError, TransportError, UnsetVariableError, ServerAddressError, OSError)
NOTICE_CHARS = 300  # a server's error in a chat's one-line notice; `mcp logs` has all of it
RESTART_SLACK = 0.5  # seconds past a restart's due time that a turn still waits for it
backoff_sleep = asyncio.sleep  # tests replace it to watch the schedule without waiting
LOGIN_POLL = 5.0  # how soon a login made in another process (`bothost mcp login`) is seen
LOGIN_NEEDED = "login_needed"


@dataclass
class ServerStatus:
    """What ``bothost mcp list`` and ``doctor`` show for one server."""

    name: str
    origin: str  # config | db
    enabled: bool
    # starting | ready | reconnecting (a new session: the server forgot ours) | failed |
    # login_needed | stopped | disabled | shadowed | standby
    state: str
    error: str | None = None
    tools: int = 0
    restarts: int = 0
    pid: int | None = None
    transport: str = "stdio"  # stdio | http
    target: str = ""  # the command line or the URL
    note: str = ""
    renewals: int = 0  # new sessions made because the server forgot ours (it restarted)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def describe(config: McpServerConfig) -> tuple[str, str]:
    """Transport and target as shown to people: secrets in args and URL masked."""
    if config.url:
        return "http", redact.mask_url(config.url)
    return "stdio", redact.command_line(config.command or "", config.args)


class ServerRunner:
    """See module docstring. Callbacks: ``on_events([Event, …])`` (async),
    ``ask(question)`` (async), ``on_change(name)`` when state or tools change."""

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        origin: str,
        *,
        home: Path,
        on_events: Callable[..., Any] | None,
        ask: Callable[..., Any] | None,
        on_change: Callable[[str], None],
        retry: bool = True,
        tokens: TokenStore | None = None,
        on_login_needed: Callable[[str, str], Any] | None = None,
        keeper: StateKeeper | None = None,
        start_within: float | None = None,
        subscribe: bool = True,
        sample: Callable[..., Any] | None = None,
    ) -> None:
        self.name = name
        # a command's bound on each start, initialize and tools/list together (None: each
        # step has only its own timeout); past it the start fails naming the step
        self.start_within = start_within
        self.keeper = keeper  # a singleton's state carried between hosts (bothost.mcp.handover)
        self.retry = retry
        self.config = config
        self.origin = origin
        self.home = Path(home)
        self.on_events = on_events  # ([Event, …]): a server's backlog at once
        self.ask = ask
        self.sample = sample  # (server, params, asker): used only with config `sampling: true`
        self.on_change = on_change
        self.tokens = tokens  # where OAuth tokens live; None: no OAuth (static headers only)
        self.on_login_needed = on_login_needed  # (name, message): tell an admin, once
        self._login: str | None = None  # why a person must log in, while that is so
        self._told = False  # an admin was told about this login_needed spell
        self._closed: asyncio.Future[str] | None = None
        redact.remember(redact.server_secrets(config))  # servers added at run time too
        self.log = server_logger(self.home, name)
        self.state = "disabled" if not config.enabled else "stopped"
        self.error: str | None = None
        self.restarts = 0
        self.session: ClientSession | None = None
        self._task: asyncio.Task | None = None
        self._settled = asyncio.Event()  # set once the current attempt is ready or failed
        self._attempting = asyncio.Event()  # set while an attempt runs (not in backoff)
        self._retry_at: float | None = None  # when the next attempt begins, in backoff
        self._attempt_began = time.monotonic()
        self._announced = False  # this attempt's "not ready" warning was logged
        # config `subscribe` (not in one-shot commands: an update after them is nobody's)
        self.subscriptions = (
            Subscriptions(name, config.subscribe, log=self.log, timeout=config.timeout)
            if subscribe and config.subscribe
            else None
        )
        self._follow: asyncio.Task | None = None  # subscribing, after ready or a renewal
        # a 2026-07-28 session's listen stream (bothost.mcp.listen), one-shot commands too:
        # at that revision it is the only way the events a call pushes reach us
        self.listens = True
        self._renewals_seen = 0

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._settled.clear()  # its first attempt begins when the task runs
            self._attempt_began, self._announced = time.monotonic(), False
            self._task = asyncio.create_task(self._run(), name=f"mcp-{self.name}")

    async def stop(self, then: str | None = None) -> None:
        """Stop the server; its state becomes ``then`` (default: disabled or stopped)."""
        if self.keeper is not None:
            await self._save_state()  # what the next leader resumes from
            self.keeper.restored = False  # if it starts here again, another may have run it
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        await self._close_session()
        self._set(then or ("disabled" if not self.config.enabled else "stopped"))

    async def standby(self) -> None:
        """Not running here, by placement: stopped if it ran, then ``standby``."""
        if self.state != STANDBY:
            await self.stop(then=STANDBY)

    async def _save_state(self) -> None:
        session = self.session
        if self.keeper is None or session is None or self.state != "ready":
            return
        try:
            async with asyncio.timeout(2 * BARRIER_TIMEOUT):
                await self.keeper.save(session)
        except Exception:  # boundary: stopping goes on; the copy in the store is older
            logger.exception("saving the state of MCP server %s failed", self.name)

    async def wait_settled(self, timeout: float) -> None:
        try:
            async with asyncio.timeout(timeout):
                await self._settled.wait()
        except TimeoutError:
            pass

    async def settle(self, grace: float) -> None:
        """Wait for the current attempt to be ready or failed, until it is `grace` seconds
        old; a server still not ready is said once per attempt (the log, and a terminal).

        A server waiting to restart within `grace` (one that died a moment ago: the first
        backoff is 1 s) is waited for as one that is starting, so the turn after a crash
        finds its tools instead of "unknown tool"."""
        if self._task is None:
            return
        retry_at = self._retry_at
        if self.state == "failed" and retry_at is not None:
            wait = retry_at - time.monotonic()
            if wait < grace:
                try:
                    async with asyncio.timeout(max(wait, 0.0) + RESTART_SLACK):
                        await self._attempting.wait()
                except TimeoutError:
                    pass
        remaining = self._attempt_began + grace - time.monotonic()
        if remaining > 0:
            await self.wait_settled(remaining)
        if self.state != "ready" and not self._announced:
            self._announced = True
            why = f": {self.error}" if self.error else ""
            said = f"MCP server {self.name} not ready ({self.state}{why})"
            # what a terminal chat shows instead of this record (bothost.host.logs.ChatNotices)
            notice = (
                f"{' '.join(said.split())[:NOTICE_CHARS]}; its tools are not listed "
                f"(why: bothost mcp logs {self.name})"
            )
            logger.warning("%s; its tools are not listed", said, extra={"notice": notice})

    def _set(self, state: str, error: str | None = None) -> None:
        if state == "starting" and self.state != "starting":
            self._attempt_began, self._announced = time.monotonic(), False
        if state == "failed":
            self._attempting.clear()
        else:
            self._attempting.set()
            self._retry_at = None
        self.state, self.error = state, error
        if state in ("ready", "failed", LOGIN_NEEDED, "stopped", "disabled"):
            self._settled.set()
        else:
            self._settled.clear()
        self.on_change(self.name)

    async def _run(self) -> None:
        lasting = self._lasting_problem()
        if lasting:  # retrying cannot help: said once, and the server stays failed
            self.log.warning("%s", lasting)
            logger.warning("MCP server %s: %s", self.name, lasting)
            self._set("failed", lasting)
            return
        delay = BACKOFF_START
        while True:
            self._set("starting")
            self._login = None
            began = time.monotonic()
            closed: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            self._closed = closed
            try:
                await self._connect(closed)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # boundary: any start failure is this server's problem
                error = str(exc) or type(exc).__name__
                if isinstance(exc, McpError):  # the code is for the log, not for people
                    self.log.info("start failed with JSON-RPC error %s", exc.code)
                if not isinstance(exc, EXPECTED):
                    logger.exception("MCP server %s failed to start", self.name)
                await self._close_session()
            else:
                self._told = False
                self._set("ready")
                self._follow_up(renewed=False)
                keeping = None
                if self.keeper is not None and self.session is not None:
                    keeping = asyncio.create_task(self.keeper.keep(self.session))
                try:
                    error = f"server {await closed}"
                finally:
                    if keeping is not None:
                        keeping.cancel()
                        await asyncio.gather(keeping, return_exceptions=True)
                await self._close_session()
                if time.monotonic() - began >= STABLE_AFTER:
                    delay = BACKOFF_START
            if self._login is not None:
                if not await self._await_login(self._login):
                    return
                delay = BACKOFF_START
                continue
            if not self.retry:
                self.log.warning("%s", error)
                self._set("failed", error)
                return
            self.log.warning("%s; restarting in %.0f s", error, delay)
            logger.warning("MCP server %s: %s; restarting in %.0f s", self.name, error, delay)
            self._set("failed", error)
            self._retry_at = time.monotonic() + delay
            await backoff_sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX)
            self.restarts += 1

    async def _await_login(self, message: str) -> bool:
        """Stay in login_needed until a login is stored (False: a one-shot run gives up)."""
        self._set(LOGIN_NEEDED, message)
        self.log.warning("%s", message)
        if not self._told and self.on_login_needed is not None:
            self._told = True
            try:
                await self.on_login_needed(self.name, message)
            except Exception:  # boundary: telling an admin must not stop the server's loop
                logger.exception("telling an admin that %s needs a login failed", self.name)
        if not self.retry or self.tokens is None:
            return False
        seen = await self.tokens.load(self.name)
        await wait_for_change(self.tokens, self.name, seen, LOGIN_POLL)
        return True

    def _needs_login(self, message: str) -> None:
        """The OAuth hook found no way on without a person: end this connection."""
        self._login = message
        if self._closed is not None and not self._closed.done():
            self._closed.set_result("needs a login")

    def _lasting_problem(self) -> str | None:
        """What would fail every attempt alike, found before the first, or None."""
        wrong = address_problem(self.config)
        if wrong:  # config load and `mcp add` refuse these: one stored before they did
            return f"{wrong}; remove it (`bothost mcp remove {self.name}`) and add it again"
        if self.config.url:
            try:
                server_url(self.config)
            except ServerAddressError as exc:  # a variable's value: the process's environment
                return str(exc)  # does not change, so only a restart can mend it
            except UnsetVariableError:
                pass  # said by each attempt, as for headers and env
        return None

    def _oauth(self, url: str) -> OAuth | None:
        from bothost.mcp.oauth.auth import OAuth  # aiohttp: only for HTTP servers

        config = self.config
        if self.tokens is None or not url:
            return None
        if any(key.lower() == "authorization" for key in config.headers):
            return None  # a static credential from config: the user's choice, used as is
        return OAuth(
            self.name,
            url,
            self.tokens,
            config=config.auth,
            log=self.log,
            on_login_needed=self._needs_login,
        )

    async def _connect(self, closed: asyncio.Future[str]) -> None:
        # the client stack is imported by the first server that starts: a command's host
        # starts none for a turn without tools, and then imports none of it (issue 19)
        from bothost.mcp.session import ClientSession
        from bothost.mcp.stdio import StdioTransport

        config = self.config
        if config.url:
            from bothost.mcp.http import HttpTransport  # aiohttp: only for HTTP servers

            url = server_url(config)
            transport: Any = HttpTransport(
                url, server_headers(config), log=self.log, auth=self._oauth(url)
            )
        else:
            command = config.command or ""
            env = server_env(config, self.home)
            if self.keeper is not None:
                if not self.keeper.restored:  # first start here since it ran elsewhere
                    await self.keeper.restore()
                env["BOTHOST_STATE_DIR"] = str(self.keeper.directory)
            transport = StdioTransport(
                resolve_command(command) or command, config.args, env, log=self.log
            )

        def on_closed(reason: str) -> None:
            if not closed.done():
                closed.set_result(reason)

        self.session = ClientSession(
            transport,
            name=self.name,
            log=self.log,
            media_dir=self.home / "media",
            ask=self.ask,
            roots=as_roots(config.roots),
            on_events=self.on_events,
            on_closed=on_closed,
            on_tools_changed=lambda _tools: self.on_change(self.name),
            on_renewal=self._renewal,
            on_resources=self.subscriptions.notice if self.subscriptions else None,
            sample=self._sampler(),
            protocol=config.protocol,
            listens=self.listens,
        )
        self._renewals_seen = 0
        await self._open(self.session)

    async def _open(self, session: ClientSession) -> None:
        """``initialize`` (its own 30 s), then ``tools/list`` within the server's timeout, as
        every listing; both within :attr:`start_within` when a command set it. A step that
        does not answer in time fails the start naming itself: a listing that hung once left
        ``mcp tools`` saying ``starting: None`` after 60 s (issue 34)."""
        step, whole = "initialize", asyncio.timeout(self.start_within)
        try:
            async with whole:
                await session.start()
                await set_level(session, self.config.log_level, self.name, self.log)
                if "tools" in session.capabilities:
                    step = "tools/list"
                    async with asyncio.timeout(self.config.timeout):
                        await session.refresh_tools()
        except TimeoutError:
            seconds = self.start_within if whole.expired() else self.config.timeout
            raise McpError(
                jsonrpc.REQUEST_TIMEOUT, f"{step} did not answer within {seconds:g} s"
            ) from None
        if "tools" in session.capabilities:
            self._check_allowlist()

    def _check_allowlist(self) -> None:
        """Warn once per start when the allowlist names a tool the server does not offer."""
        offered = {t["name"] for t in self.session.tools} if self.session else set()
        missing = [t for t in self.config.tools if t not in offered]
        if missing:
            names = ", ".join(missing)
            self.log.warning("the tools allowlist names %s, which the server does not offer", names)
            logger.warning(
                "MCP server %s: its tools allowlist names %s, which the server does not offer "
                "(mcp.servers.%s.tools)",
                self.name,
                names,
                self.name,
            )

    def _sampler(self) -> Any:
        """This server's sampler: the host's, when config turns sampling on for it."""
        sample = self.sample
        if sample is None or not self.config.sampling:
            return None
        return functools.partial(sample, self.name)

    def _renewal(self) -> None:
        """A renewal began or ended; one that made a new session is followed up: the server
        forgot our log level and subscriptions with the old one."""
        self.on_change(self.name)
        session = self.session
        if session is None or session.renewing or session.renewals == self._renewals_seen:
            return
        self._renewals_seen = session.renewals
        self._follow_up(renewed=True)

    def _follow_up(self, renewed: bool) -> None:
        """What a ready session does in the background: subscribe (and after a renewal set
        the log level again, which a start does before it is ready)."""
        session = self.session
        if session is None or (self.subscriptions is None and not renewed):
            return
        if self._follow is not None:
            self._follow.cancel()
        self._follow = asyncio.create_task(
            self._settle_in(session, renewed), name=f"mcp-follow-{self.name}"
        )

    async def _settle_in(self, session: ClientSession, renewed: bool) -> None:
        try:
            if renewed:
                await set_level(session, self.config.log_level, self.name, self.log)
            if self.subscriptions is not None:
                await self.subscriptions.start(session)
        except Exception:  # boundary: a follow-up's failure must not end the server's loop
            logger.exception("MCP server %s: subscribing failed", self.name)

    async def _close_session(self) -> None:
        follow, self._follow = self._follow, None
        if follow is not None:
            follow.cancel()
            await asyncio.gather(follow, return_exceptions=True)
        if self.subscriptions is not None:
            await self.subscriptions.stop()
        session = self.session
        if session is None:
            return
        try:
            await session.close()
        except Exception:
            logger.exception("closing MCP server %s failed", self.name)
        # forgotten only once closed: a close cut short (stop() cancelling the loop while it
        # closes) is finished by stop(), instead of leaving a transport half open
        if self.session is session:
            self.session = None

    # -- what the manager asks ---------------------------------------------------------

    def tools(self) -> list[dict[str, Any]]:
        if self.session is None or self.state != "ready":
            return []
        allowed = set(self.config.tools)
        return [t for t in self.session.tools if not allowed or t["name"] in allowed]

    def instructions(self) -> str:
        if self.session is None or self.state != "ready":
            return ""
        value = self.session.instructions
        return value if isinstance(value, str) else ""

    def capabilities(self) -> dict[str, Any]:
        """What the server declared in its ``initialize`` answer; {} unless it is ready."""
        if self.session is None or self.state != "ready":
            return {}
        return self.session.capabilities

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """One request (a listing, a read) within the server's ``timeout``; raises McpError,
        also when the server is not running."""
        if self.state == "starting":
            await self.wait_settled(min(self.config.timeout, START_WAIT))
        session = self.session
        if session is None or self.state != "ready":
            why = f": {self.error}" if self.error else ""
            raise McpError(
                jsonrpc.CONNECTION_CLOSED,
                f"MCP server {self.name} is not running ({self.state}{why})",
            )
        return await session.request(method, params, timeout=self.config.timeout)

    def status(self) -> ServerStatus:
        transport, target = describe(self.config)
        pid = getattr(self.session.transport, "pid", None) if self.session else None
        error = redact.redact(self.error) if self.error else self.error
        session = self.session
        renewing = session is not None and session.renewing and self.state == "ready"
        return ServerStatus(
            self.name,
            self.origin,
            self.config.enabled,
            "reconnecting" if renewing else self.state,
            error,
            len(self.tools()),
            self.restarts,
            pid,
            transport,
            target,
            renewals=session.renewals if session is not None else 0,
        )

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any] | None,
        timeout: float | None = None,
        on_progress: Any = None,
        ask: Any = None,
    ) -> CallResult:
        timeout = timeout or self.config.timeout
        if self.state == "starting":
            await self.wait_settled(min(timeout, START_WAIT))
        session = self.session
        if self.state == LOGIN_NEEDED:
            return CallResult.failure(
                f"MCP server {self.name} needs a login before it can be used; "
                f"an admin runs `bothost mcp login {self.name}`"
            )
        if session is None or self.state != "ready":
            why = f": {self.error}" if self.error else ""
            return CallResult.failure(f"MCP server {self.name} is not running ({self.state}{why})")
        if self.config.tools and tool not in self.config.tools:
            return CallResult.failure(
                f"tool {tool} of MCP server {self.name} is not enabled "
                f"(mcp.servers.{self.name}.tools)"
            )
        longest = self.config.max_timeout
        return await session.call_tool(
            tool,
            arguments,
            timeout=timeout,
            max_timeout=DEFAULT_MAX_TIMEOUT if longest is None else longest,
            on_progress=on_progress,
            ask=ask,
        )
