"""What the ``bothost mcp`` commands do, apart from parsing their arguments.

CLI commands run in their own process, usually while no host is running: ``call`` and
``tools`` start a private manager for just the servers they need (recording the ``event/*``
those servers push meanwhile through the given callback) and stop it afterwards. ``list``
shows config plus table, overlaid with the live state a running host publishes in
``<home>/state/mcp-status.json`` (ignored once that host's process is gone).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import deque
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from bothost.config import McpServerConfig
from bothost.mcp.manager import McpManager, McpManagerError, status_path
from bothost.mcp.runner import ServerStatus
from bothost.mcp.serverlog import log_path

PRIVATE_START_WAIT = 60.0  # a CLI command waits this long for the one server it names…
LISTING_WAIT = 5.0  # …and a listing of every server this long: one stuck server holds nobody


def manager_for(
    config: Any,
    store: Any,
    home: Path,
    on_event: Callable[..., Any] | None = None,
    ask: Callable[..., Any] | None = None,
) -> McpManager:
    return McpManager(
        config.mcp.servers,
        store,
        home,
        on_event=on_event,
        ask=ask,
        publish_status=False,
        retry=False,
    )


def live_status(home: Path) -> dict[str, dict[str, Any]]:
    """The running host's published states by server name, or {} if no host runs."""
    try:
        data = json.loads(status_path(home).read_text())
        os.kill(int(data["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {s["name"]: s for s in data.get("servers", []) if s.get("state") != "shadowed"}


async def list_servers(
    manager: McpManager, check: bool = False, only: set[str] | None = None
) -> list[ServerStatus]:
    """Every server; live state from a running host, or from starting them (or `only`) now."""
    if check:
        await manager.start(only=only, wait=PRIVATE_START_WAIT)
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
            for key in ("state", "error", "tools", "restarts", "pid"):
                setattr(status, key, seen.get(key))
            status.note = status.note or "state reported by the running host"
    return statuses


@contextlib.asynccontextmanager
async def private(manager: McpManager, names: set[str]) -> AsyncIterator[McpManager]:
    """Start just `names` for the length of a command."""
    await manager.reload()
    unknown = names - set(manager.runners)
    if unknown:
        raise McpManagerError(f"no MCP server named {sorted(unknown)[0]!r}")
    disabled = [n for n in names if not manager.runners[n].config.enabled]
    if disabled:
        raise McpManagerError(
            f"MCP server {disabled[0]} is disabled (`bothost mcp enable {disabled[0]}`)"
        )
    await manager.start(only=names, wait=PRIVATE_START_WAIT if len(names) == 1 else LISTING_WAIT)
    try:
        yield manager
    finally:
        await manager.stop()


def enabled_names(manager: McpManager) -> set[str]:
    return {name for name, runner in manager.runners.items() if runner.config.enabled}


def new_config(
    command: tuple[str, ...],
    url: str | None,
    headers: dict[str, str],
    env: dict[str, str],
    description: str,
    timeout: float | None,
    enabled: bool,
) -> McpServerConfig:
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
    )
    if timeout:
        config.timeout = timeout
    return config


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
    path = log_path(home, name)
    backup = path.with_name(path.name + ".1")
    if not path.exists() and not backup.exists():
        raise McpManagerError(f"no log for MCP server {name!r} yet ({path})")
    kept: deque[str] = deque(maxlen=lines)
    for source in (backup, path):
        if source.exists():
            with source.open(encoding="utf-8", errors="replace") as f:
                kept.extend(line.rstrip("\n") for line in f)
    return list(kept)
