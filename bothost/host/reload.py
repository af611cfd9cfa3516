"""A saved edit of the config file, applied to the running host.

:class:`ConfigWatcher` polls the files the host's config came from (size, modification time
and a hash of the bytes, every :data:`POLL_SECONDS`, or ``BOTHOST_CONFIG_POLL`` seconds; 0:
never); SIGHUP asks at once, and ``bothost reload`` sends it (:mod:`bothost.host.reload_request`).
On a change, :func:`reload` loads and checks the config as ``bothost run`` did at start — the
same :func:`~bothost.host.config_load.load_core` (every domain's check), the plugins' sections
(already declared: a registration hook runs once), :func:`~bothost.config.check.check_registered`
and :func:`~bothost.config.check.check_serving` — so an edit ``run`` would refuse is one log line
naming the file and key path, and the running config stays.

A valid edit is applied by top-level section, each through its named function in
:data:`LIVE`: the model, the agent's settings, permission rules, the tick and usage read
the new values from the next turn or tick on, and the MCP manager starts, stops or restarts
the servers whose entries changed. A plugin's section takes the keys its running plugin
takes live (:mod:`bothost.config.live`: Slack's access lists). Everything else (the
listener, the store, the plugins, the rest of the platforms' sections, ``log_level``, and
``tick.enabled``/``lease``/``max_pending_per_source``) keeps its start-up value until a
restart, and each changed key
is reported as "restart needed: KEY": in the log, ``/healthz``, and ``bothost doctor``
(through ``state/config-status.json``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import logging
import math
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bothost import redact
from bothost.agent.mcp_tools import McpToolSource
from bothost.config import Config, bind_declared, secret_values
from bothost.config.check import check_registered, check_serving
from bothost.config.http import as_written
from bothost.config.schema import ConfigError
from bothost.host.config_load import load_core

if TYPE_CHECKING:
    from bothost.host.host import Host

logger = logging.getLogger(__name__)

POLL_SECONDS = 1.0  # a saved edit reaches the host within about this (the contract: seconds)
POLL_ENV = "BOTHOST_CONFIG_POLL"  # seconds between looks; 0: only SIGHUP and `bothost reload`
# tick keys read once at start: the lease by leadership, the bound by the event intake, and
# whether a ticker runs at all
TICK_AT_START = ("enabled", "lease", "max_pending_per_source")
# what an old model client may still be serving: the turns that use it end first
RETIRE_POLL = 1.0


def status_path(home: Path) -> Path:
    return Path(home) / "state" / "config-status.json"


@dataclass
class ReloadStatus:
    """What the host's last look at its config file found, for ``/healthz`` and doctor."""

    restart_needed: list[str] = field(default_factory=list)  # key paths, sorted
    error: str = ""  # the last edit's problem, while the file still has it
    applied_at: float | None = None  # when an edit was last applied
    looked_at: float | None = None  # when the last look began (`bothost reload` waits on it)
    applied: list[str] = field(default_factory=list)  # the sections the last look applied

    def to_dict(self) -> dict[str, Any]:
        # "ok" also makes /healthz show a caller without the token no more than that
        return {
            "ok": not self.error and not self.restart_needed,
            "restart_needed": self.restart_needed,
            "error": self.error,
            "applied_at": self.applied_at,
            "looked_at": self.looked_at,
            "applied": self.applied,
        }


def fingerprint(paths: list[Path]) -> list[tuple[str, Any]]:
    """Each file's size, modification time and content hash (None: not there)."""
    out: list[tuple[str, Any]] = []
    for path in paths:
        try:
            stat = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            out.append((str(path), None))
            continue
        out.append((str(path), (stat.st_size, stat.st_mtime_ns, digest)))
    return out


class ConfigWatcher:
    """Polls the config's files; each change is :func:`reload`-ed once."""

    def __init__(self, host: Host, interval: float | None = None) -> None:
        self.host = host
        self.interval = poll_interval(os.environ) if interval is None else interval
        self._poked = asyncio.Event()
        # none seen yet: the first look loads the files again, so an edit saved while the
        # host was starting (after it read them) is not missed
        self._seen: list[tuple[str, Any]] = []

    def paths(self) -> list[Path]:
        """The files loaded, and the home's own file even before it exists (written later)."""
        found = [Path(p) for p in self.host.config.sources]
        home_file = self.host.home / "bothost.yaml"
        return found if home_file in found else [*found, home_file]

    def poke(self) -> None:
        """Look now (SIGHUP): applied even when the files look unchanged."""
        self._poked.set()

    async def run(self) -> None:
        publish(self.host)
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.wait_for()):
                    await self._poked.wait()
            poked, now = self._poked.is_set(), fingerprint(self.paths())
            self._poked.clear()
            if poked or now != self._seen:
                self._seen = now
                await reload(self.host)
                self._seen = fingerprint(self.paths())  # the paths may have changed

    def wait_for(self) -> float | None:
        """Seconds until the next look unless poked (None: only when poked)."""
        if self.interval > 0:
            return self.interval
        return 0 if not self._seen else None  # not polling: the first look all the same


def poll_interval(environ: Mapping[str, str]) -> float:
    """``BOTHOST_CONFIG_POLL`` as seconds (0: no polling); :data:`POLL_SECONDS` if unset."""
    text = environ.get(POLL_ENV, "").strip()
    if not text:
        return POLL_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < math.inf:
        logger.warning(
            "%s=%r is no number of seconds; polling every %ss", POLL_ENV, text, POLL_SECONDS
        )
        return POLL_SECONDS
    return seconds


def load(host: Host) -> Config:
    """The config as ``bothost run`` would load and check it now (:class:`ConfigError`)."""
    config = load_core(host.config_file, host.home)
    bind_declared(config, host.config.declared)
    check_registered(config, providers=host.providers, platforms=host.platforms)
    check_serving(config)
    return config


async def reload(host: Host) -> ReloadStatus:
    """Load the config again and apply it; an invalid one is logged and changes nothing."""
    status = host.reload_status
    status.looked_at, status.applied = time.time(), []
    try:
        new = load(host)
    except (ConfigError, OSError) as exc:
        status.error = str(exc)
        logger.error("config not applied: %s; the running config stays", exc)
        publish(host)
        return status
    status.error = ""
    applied, status.restart_needed = await apply(host, new)
    status.applied = applied
    if applied:
        status.applied_at = time.time()
        logger.info("config applied: %s changed", ", ".join(applied))
    if status.restart_needed:
        logger.warning("restart needed: %s changed", ", ".join(status.restart_needed))
    publish(host)
    return status


async def apply(host: Host, new: Config) -> tuple[list[str], list[str]]:
    """Make ``new`` the host's config, its start-up-only parts kept as they run; the live
    sections applied, and the key paths that need a restart."""
    old = host.config
    running = as_running(old, new)
    redact.remember(redact.config_secrets(new) | secret_values(new))  # before any log
    host.config = running
    applied = []
    for name, applier in LIVE.items():
        if getattr(old, name) == getattr(running, name):
            continue
        applied.append(name)
        try:
            await applier(host, old, running)
        except Exception:  # boundary: one section's failure leaves the others applied
            logger.exception("applying the config's %s failed", name)
    applied += await host.live_sections.apply(running, new)  # the plugins' own sections
    return applied, [as_written(new, path) for path in changed(running, new)]


def as_running(old: Config, new: Config) -> Config:
    """``new`` with everything but the live sections (and the start-up tick keys) as in
    ``old``: what the running host actually uses."""
    kept = {
        f.name: getattr(old, f.name)
        for f in dataclasses.fields(Config)
        if f.name not in LIVE and f.name not in ("sources", "raw", "layers", "pending")
    }
    tick = dataclasses.replace(new.tick, **{k: getattr(old.tick, k) for k in TICK_AT_START})
    return dataclasses.replace(new, **kept, tick=tick)


def changed(old: Any, new: Any, path: str = "") -> list[str]:
    """The key paths whose values differ, down to the leaves of dataclasses and mappings."""
    if dataclasses.is_dataclass(old) and type(old) is type(new):
        names = [f.name for f in dataclasses.fields(old)]
        if isinstance(old, Config):  # its own bookkeeping is no key of the file
            names = [n for n in names if n not in Config.INTERNAL] + ["platforms", "sections"]
        return [p for n in names for p in changed(getattr(old, n), getattr(new, n), dot(path, n))]
    if isinstance(old, dict) and isinstance(new, dict):
        keys = sorted(set(old) | set(new), key=str)
        return [p for k in keys for p in changed(old.get(k), new.get(k), dot(path, str(k)))]
    return [] if old == new else [path]


def dot(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --- the live sections, each applied by its function ----------------------------------------


async def apply_llm(host: Host, old: Config, new: Config) -> None:
    """A new model client for the next turn; the old one closes once no turn uses it."""
    host.provider_name = host.check_provider()
    retired, host._llm = host._llm, None
    if retired is not None:
        host.supervise(f"retire model client {id(retired)}", lambda: retire(host, retired))
    if host.ticker is not None:  # whether the tick asks the model depends on it
        await apply_tick(host, old, new)


async def retire(host: Host, client: Any) -> None:
    close = getattr(client, "close", None)
    if close is None:
        return
    while host.turns:  # a turn that started before the edit finishes on its client
        await asyncio.sleep(RETIRE_POLL)
    try:
        await close()
    except Exception:  # boundary: a client that fails to close is not tried again
        logger.exception("closing the replaced model client failed")


async def apply_usage(host: Host, old: Config, new: Config) -> None:
    """Budgets are held by the metered client (made anew), prices by the dashboard's queries."""
    host.queries.use_usage(new.usage)
    if old.llm == new.llm:  # else apply_llm has made it anew already
        await apply_llm(host, old, new)


async def apply_tick(host: Host, old: Config, new: Config) -> None:
    from bothost.host.wiring import tick_triage  # the turn's modules: not for --help

    if host.events is not None:
        host.events.config = new.tick  # the intake's urgency rules and dedupe window
    if host.ticker is not None:
        host.ticker.reconfigure(new.tick, tick_triage(host))


async def apply_mcp(host: Host, old: Config, new: Config) -> None:
    for source in host.registry.sources:
        if isinstance(source, McpToolSource):
            source.config = new  # what it knows of a server that is not running
    if host.mcp is not None:
        await host.mcp.set_config_servers(new.mcp.servers)


async def read_anew(host: Host, old: Config, new: Config) -> None:
    """Read from ``host.config`` at every turn or call: nothing to do."""


Applier = Callable[["Host", Config, Config], Awaitable[None]]
LIVE: dict[str, Applier] = {
    "llm": apply_llm,
    "usage": apply_usage,
    "agent": read_anew,
    "permissions": read_anew,
    "tick": apply_tick,
    "mcp": apply_mcp,
}


def publish(host: Host) -> None:
    """Write the status for ``bothost doctor`` in another process."""
    path = status_path(host.home)
    data = {"pid": os.getpid(), "updated_at": time.time(), **host.reload_status.to_dict()}
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)
    except OSError as exc:
        logger.warning("could not write %s: %s", path, exc)


def unpublish(host: Host) -> None:
    """A stopped host needs no restart: its status goes."""
    with contextlib.suppress(OSError):
        status_path(host.home).unlink()


def read_published(home: Path) -> dict[str, Any] | None:
    """A running host's status (None: no host runs on this home, or it says nothing)."""
    try:
        data = json.loads(status_path(home).read_text())
        os.kill(int(data["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return data if isinstance(data, dict) else None
