"""What the ``bothost mcp`` commands do, apart from parsing their arguments.

CLI commands run in their own process, usually while no host is running: ``call`` and
``tools`` start a private manager for just the servers they need (recording the ``event/*``
those servers push meanwhile through the given callback) and stop it afterwards. ``list``
shows config plus table, overlaid with the live state a running host publishes in
``<home>/state/mcp-status.json`` (ignored once that host's process is gone).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from bothost.config import MCP_TIMEOUT_LIMIT, McpServerConfig
from bothost.config.schema import duration_problem, parse_duration
from bothost.mcp import resources
from bothost.mcp.concealed import conceal_data
from bothost.mcp.content import CallResult
from bothost.mcp.environment import server_headers
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.manager import (
    McpManager,
    McpManagerError,
    McpNotFoundError,
    McpUnreachableError,
    status_path,
)
from bothost.mcp.oauth.tokens import DbTokens, all_records, clear_record
from bothost.mcp.roster import NAME
from bothost.mcp.runner import LOGIN_NEEDED, ServerStatus
from bothost.mcp.serverlog import log_path, server_logger
from bothost.mcp.transport import TransportError

PRIVATE_START_WAIT = 60.0  # a CLI command waits this long for the one server it names…
LISTING_WAIT = 5.0  # …and a listing of every server this long: one stuck server holds nobody
# A start that failed at its bound closes its server before it says so (SIGTERM, then SIGKILL
# 3 s later): the wait for the verdict is this much longer than the bound.
CLOSE_SLACK = 5.0


def manager_for(
    config: Any,
    store: Any,
    home: Path,
    ask: Callable[..., Any] | None = None,
    on_events: Callable[..., Any] | None = None,
) -> McpManager:
    """A manager of its own for a command (no retries, no published status); ``on_events``
    takes each server's pushed ``event/*`` backlog (``Runtime.recording_events``)."""
    return McpManager(
        config.mcp.servers,
        store,
        home,
        on_events=on_events,
        ask=ask,
        publish_status=False,
        retry=False,
        subscribe=False,  # an update would come after the command is gone
    )


def live_status(home: Path) -> dict[str, dict[str, Any]]:
    """The running host's published states by server name, or {} if no host runs."""
    try:
        data = json.loads(status_path(home).read_text())
        os.kill(int(data["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {s["name"]: s for s in data.get("servers", []) if s.get("state") != "shadowed"}


def live_listings(home: Path) -> dict[str, dict[str, Any]]:
    """The running host's published tool listings by server name (``source``, ``tools`` as
    each server lists them, ``resources``), or {} if no host runs."""
    try:
        data = json.loads(status_path(home).read_text())
        os.kill(int(data["pid"]), 0)
        listings = data.get("listings")
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return listings if isinstance(listings, dict) else {}


async def list_servers(
    manager: McpManager, check: bool = False, only: set[str] | None = None
) -> list[ServerStatus]:
    """Every server; live state from a running host, or from starting them (or `only`) now."""
    if check:
        await start_bounded(manager, only, PRIVATE_START_WAIT)
        try:
            return manager.status()
        finally:
            await manager.stop()
    await manager.reload()
    statuses = manager.status()
    live = live_status(manager.home)
    for status in statuses:
        seen = live.get(status.name)
        if seen and status.state != "shadowed" and seen.get("origin") == status.origin:
            for key in ("state", "error", "tools", "restarts", "pid", "renewals"):
                setattr(status, key, seen.get(key))
            status.note = status.note or "state reported by the running host"
            toggled(status)
    records = await manager.store.run(all_records)
    for status in statuses:
        why = (records.get(status.name) or {}).get("login_needed")
        if why and status.name not in live and status.state not in ("shadowed", "disabled"):
            status.state = "login_needed"
            status.error = f"login needed: {why} (bothost mcp login {status.name})"
    return statuses


def toggled(status: ServerStatus) -> None:
    """What ``mcp disable`` or ``mcp enable`` asked, said before the running host acts on it
    (within :data:`~bothost.mcp.manager.RELOAD_INTERVAL`): its published state was the old one."""
    if not status.enabled and status.state not in ("disabled", "stopped"):
        status.state, status.error = "disabled", None
        status.note = "stopping: the running host stops it within seconds"
    elif status.enabled and status.state == "disabled":
        status.state = "starting"
        status.note = "the running host starts it within seconds"


def not_ready(statuses: list[ServerStatus]) -> list[ServerStatus]:
    """The enabled servers a check started that cannot be used: failed, still starting when
    the wait ended, or waiting for a login (``mcp list --check`` exits 1 for any)."""
    return [s for s in statuses if s.enabled and s.state in ("starting", "failed", LOGIN_NEEDED)]


async def start_bounded(manager: McpManager, names: set[str] | None, within: float) -> None:
    """Start `names` (None: every enabled server), each start, initialize and tools/list
    together, bounded by `within` seconds, and wait until each is ready or failed: a server
    that does not answer is failed with the step it hung in, never left ``starting``."""
    await manager.start(only=names, wait=within + CLOSE_SLACK, start_within=within)


@contextlib.asynccontextmanager
async def private(
    manager: McpManager, names: set[str], within: float | None = None
) -> AsyncIterator[McpManager]:
    """Start just `names` for the length of a command, each start bounded by `within`
    seconds (default 60 s for one server, 5 s each for several)."""
    await manager.reload()
    unknown = names - set(manager.runners)
    if unknown:
        raise McpNotFoundError(f"no MCP server named {sorted(unknown)[0]!r}")
    disabled = [n for n in names if not manager.runners[n].config.enabled]
    if disabled:
        raise McpManagerError(
            f"MCP server {disabled[0]} is disabled (`bothost mcp enable {disabled[0]}`)"
        )
    if within is None:
        within = PRIVATE_START_WAIT if len(names) == 1 else LISTING_WAIT
    await start_bounded(manager, names, within)
    try:
        yield manager
    finally:
        await manager.stop()


async def call_tool(
    manager: McpManager,
    name: str,
    tool: str,
    arguments: dict[str, Any],
    timeout: float | None = None,
    on_progress: Callable[..., Any] | None = None,
) -> CallResult:
    """Start server `name` for this call alone and call `tool`. `timeout` (``mcp call
    --timeout``) bounds the whole wait, the start (initialize, tools/list) included: the
    call gets what is left of it, renewed by progress as any call's timeout. Without it the
    start has 60 s and the call the server's timeout."""
    began = time.monotonic()
    async with private(manager, {name}, within=timeout) as started:
        left = None if timeout is None else timeout - (time.monotonic() - began)
        ready = started.runners[name].state == "ready"  # else the call says why it is not
        if left is not None and left <= 0 and ready:
            return CallResult.failure(
                f"MCP server {name} took the whole timeout ({timeout:g} s) to start; "
                f"{tool} was not called"
            )
        return await started.call_tool(name, tool, arguments, timeout=left, on_progress=on_progress)


def ready_runner(manager: McpManager, name: str) -> Any:
    """The runner of started server `name`; McpUnreachableError (exit 1) if it is not ready."""
    runner = manager.runners[name]
    if runner.state != "ready":
        why = f": {runner.error}" if runner.error else ""
        raise McpUnreachableError(f"MCP server {name} is not ready ({runner.state}{why})")
    return runner


async def list_resources(manager: McpManager, name: str) -> dict[str, Any]:
    """Server `name`'s resources and resource templates as it lists them, masked, started for
    this alone: ``{"resources", "resourceTemplates", "text"}`` (``text``: what ``mcp
    resources`` prints); McpUnreachableError when it is not ready or the listing fails."""
    async with private(manager, {name}) as started:
        try:
            found, templates = await resources.listings(ready_runner(started, name))
        except McpError as exc:
            raise McpUnreachableError(
                f"listing the resources of {name} failed: {exc.message}"
            ) from None
    found.items, templates.items = conceal_data(found.items), conceal_data(templates.items)
    return {
        "resources": found.items,
        "resourceTemplates": templates.items,
        "text": resources.listing_lines(name, found, templates),
    }


async def read_resource(manager: McpManager, name: str, uri: str) -> dict[str, Any]:
    """The ``resources/read`` result for `uri` of server `name` (started for this alone),
    masked; McpUnreachableError when it is not ready or the read fails."""
    async with private(manager, {name}) as started:
        try:
            answer = await ready_runner(started, name).request("resources/read", {"uri": uri})
        except McpError as exc:
            raise McpUnreachableError(f"reading {uri} from {name} failed: {exc.message}") from None
    found: dict[str, Any] = conceal_data(answer)
    return found


def read_text(answer: dict[str, Any], home: Path) -> CallResult:
    """What ``mcp read`` prints of a read: text as text, binary parts saved under media/."""
    return resources.read_result(answer, Path(home) / "media")


async def login(manager: McpManager, name: str, web: Any, say: Callable[[str], None]) -> str:
    """Log in to remote server `name` (see :mod:`bothost.mcp.oauth.login`); what was done.

    The redirect comes to the running host's ``/oauth/callback`` when a host runs (or to
    ``auth.redirect_uri``), else to a one-shot listener on 127.0.0.1.
    """
    from bothost.mcp.oauth import login as oauth_login  # aiohttp: only for this command
    from bothost.mcp.oauth.auth import OAuth

    config = await _remote(manager, name)
    try:
        challenge = await oauth_login.probe(config.url or "", server_headers(config))
    except TransportError as exc:
        raise McpUnreachableError(f"{name}: {exc}") from None
    grant = config.auth.grant if config.auth else "authorization_code"
    if challenge is None and grant == "authorization_code":
        return f"{name} answered without asking for a login; nothing to do"
    log = server_logger(manager.home, name)
    tokens = DbTokens(manager.store)
    redirect = config.auth.redirect_uri if config.auth else None
    if redirect is None and live_status(manager.home) and web is not None:
        host = "127.0.0.1" if web.host in ("0.0.0.0", "::", "") else web.host
        redirect = f"http://{host}:{web.port}{oauth_login.CALLBACK_PATH}"
    try:
        if redirect is not None or grant != "authorization_code":
            receiver: Any = oauth_login.HostCallback(manager.store, name, redirect or "", say)
            oauth = OAuth(
                name, config.url or "", tokens, config=config.auth, log=log, authorizer=receiver
            )
            await oauth.login(challenge or "")
        else:
            async with oauth_login.LoopbackCallback(say) as loopback:
                oauth = OAuth(
                    name, config.url or "", tokens, config=config.auth, log=log, authorizer=loopback
                )
                await oauth.login(challenge or "")
    except TransportError as exc:
        raise McpUnreachableError(f"{name}: {exc}") from None
    return f"logged in to {name}"


URL_WAIT = 30.0  # discovery and registration before the authorization URL can be shown


async def start_login(manager: McpManager, name: str, redirect_uri: str) -> str:
    """Begin a login to remote server `name` from a running host (the dashboard's "log in"):
    the authorization URL, at once. The redirect comes to `redirect_uri` (the host's
    ``/oauth/callback`` as the person's browser reaches it); the login finishes in the
    background, and the server's runner picks the tokens up."""
    from bothost.mcp.oauth import login as oauth_login  # aiohttp: only for this command
    from bothost.mcp.oauth.auth import OAuth

    config = await _remote(manager, name)
    try:
        challenge = await oauth_login.probe(config.url or "", server_headers(config))
    except TransportError as exc:
        raise McpUnreachableError(f"{name}: {exc}") from None
    shown: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def say(url: str) -> None:
        if not shown.done():
            shown.set_result(url)

    receiver = oauth_login.HostCallback(manager.store, name, redirect_uri, say, browser=False)
    log = server_logger(manager.home, name)
    oauth = OAuth(
        name,
        config.url or "",
        DbTokens(manager.store),
        config=config.auth,
        log=log,
        authorizer=receiver,
    )

    async def log_in() -> None:
        try:
            await oauth.login(challenge or "")
        except Exception as exc:  # before the URL: the caller says why; after it: logged
            if not shown.done():
                shown.set_exception(exc)
            raise

    task = manager.spawn(log_in(), f"login to {name}")
    try:
        async with asyncio.timeout(URL_WAIT):
            return await shown
    except TransportError as exc:
        raise McpUnreachableError(f"{name}: {exc}") from None
    except TimeoutError:
        task.cancel()
        raise McpUnreachableError(f"{name}: no authorization URL within {URL_WAIT:g} s") from None


async def logout(manager: McpManager, name: str) -> None:
    """Forget the server's tokens and registration (a running host sees it within seconds)."""
    await _remote(manager, name)
    await manager.store.run(lambda db: clear_record(db, name))


async def _remote(manager: McpManager, name: str) -> McpServerConfig:
    await manager.reload()
    runner = manager.runners.get(name)
    if runner is None:
        raise McpNotFoundError(f"no MCP server named {name!r}")
    if not runner.config.url:
        raise McpManagerError(f"{name} runs as a command (stdio); only remote servers log in")
    return runner.config


def enabled_names(manager: McpManager) -> set[str]:
    return {name for name, runner in manager.runners.items() if runner.config.enabled}


def new_config(
    command: tuple[str, ...],
    url: str | None,
    headers: dict[str, str],
    env: dict[str, str],
    description: str,
    timeout: str | None,
    enabled: bool,
    max_timeout: str | None = None,
    singleton: bool | None = None,
    roots: list[str] | None = None,
) -> McpServerConfig:
    """A server from `mcp add`'s options; `timeout` and `max_timeout` are durations as in
    config (``90``, ``"90s"``, ``"10m"``), checked by the manager like config, as `roots` are."""
    if bool(command) == bool(url):
        raise McpManagerError("give either `-- COMMAND ARGS…` or `--url URL`, not both or neither")
    config = McpServerConfig(
        command=command[0] if command else None,
        args=list(command[1:]),
        url=url,
        headers=headers,
        env=env,
        description=description,
        enabled=enabled,
        singleton=singleton,
        roots=list(roots or []),
    )
    if timeout:
        config.timeout = duration(timeout, "--timeout")
    if max_timeout:
        config.max_timeout = duration(max_timeout, "--max-timeout")
    return config


def duration(value: str, what: str) -> float:
    """`value` in seconds; `McpManagerError` naming `what` when it is no server timeout."""
    seconds, wrong = checked_duration(value)
    if wrong:
        raise McpManagerError(f"{what} {value!r}: {wrong}")
    return seconds


def checked_duration(value: str) -> tuple[float, str | None]:
    """`value` in seconds and what is wrong with it as a server's timeout (None: nothing):
    more than 0 s, and at most :data:`~bothost.config.MCP_TIMEOUT_LIMIT` as in config."""
    try:
        seconds = parse_duration(value)
    except ValueError as exc:
        return 0.0, f"expected {exc}"
    if seconds <= 0:
        return seconds, "expected more than 0 s"
    return seconds, duration_problem(seconds, (0, MCP_TIMEOUT_LIMIT))


def pairs(values: tuple[str, ...], what: str) -> dict[str, str]:
    out = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key:
            raise McpManagerError(f"{what} {value!r}: expected KEY=VALUE")
        out[key.strip()] = val
    return out


def tail_log(home: Path, name: str, lines: int) -> list[str]:
    """The last `lines` lines of the server's log (reaching into the rotated backup)."""
    if not NAME.fullmatch(name):  # `../../x` would read <home>/x.log, or any NAME.log
        raise McpNotFoundError(f"no MCP server named {name!r} (names use A-Z a-z 0-9 _ -)")
    path = log_path(home, name)
    backup = path.with_name(path.name + ".1")
    if not path.exists() and not backup.exists():
        raise McpNotFoundError(f"no log for MCP server {name!r} yet ({path})")
    kept: deque[str] = deque(maxlen=lines)
    for source in (backup, path):
        if source.exists():
            with source.open(encoding="utf-8", errors="replace") as f:
                kept.extend(line.rstrip("\n") for line in f)
    return list(kept)
