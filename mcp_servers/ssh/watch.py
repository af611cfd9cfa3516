"""The monitor's poll: look at every monitored alias, push what changed, save the state.

Aliases are polled concurrently, each bounded by the service's deadlines, so one dead
host costs one connect timeout, not the sum of all. A password alias is polled only while
its connection or remembered password lasts: a background poll cannot ask anybody. The
new verdicts are saved only once every change was delivered to a client.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from bothost.mcp_servers.kit import Notify, Outbox

from . import monitor, system
from .aliases import Alias
from .errors import SshError
from .monitor import Condition, MonitorState
from .passwords import LOGIN
from .service import SshService

logger = logging.getLogger(__name__)

STATE_FILE = "monitor.json"


async def _observe(svc: SshService, alias: Alias, state: MonitorState) -> list[Condition]:
    watch = alias.monitors
    if (
        alias.auth == "password"
        and not svc.pool.live(alias)
        and not svc.passwords.get(LOGIN, alias.name)
    ):
        logger.info("monitor: skipping %s until someone gives its password", alias.name)
        return []
    try:
        _, client = await svc.connect(alias.name, interactive=False)
    except SshError as exc:
        logger.info("monitor: %s unreachable: %s", alias.name, exc)
        return [monitor.reachable_condition(alias, str(exc))] if watch.unreachable else []
    found = [monitor.reachable_condition(alias, None)] if watch.unreachable else []
    if watch.disk_percent is not None:
        try:
            rows = await svc.thread(
                system.disk_usage, client, watch.disk_paths, timeout=system.QUERY_TIMEOUT + 5
            )
            found += monitor.disk_conditions(alias, rows)
        except SshError as exc:
            logger.warning("monitor: disk check on %s failed: %s", alias.name, exc)
            svc.pool.drop(alias.name)  # a silent host: reconnect (and so notice it) next time
    if watch.failed_units:
        try:
            failed = await svc.thread(system.failed_units, client, timeout=system.QUERY_TIMEOUT + 5)
        except SshError as exc:
            logger.warning("monitor: unit check on %s failed: %s", alias.name, exc)
            svc.pool.drop(alias.name)
            return found
        if failed is None:
            logger.warning("monitor: systemctl unusable on %s; unit check skipped", alias.name)
        else:
            found += monitor.unit_conditions(alias, failed, state.keys(f"{alias.name}/unit:"))
    return found


async def poll(
    svc: SshService,
    notify: Notify,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> list[dict[str, Any]]:
    """One monitor round; returns the events it pushed, dated by `clock`."""
    svc.pool.reap()
    state = MonitorState(svc.state_dir / STATE_FILE)
    aliases = [a for a in svc.aliases.load().values() if a.monitors.enabled]
    rounds = await asyncio.gather(
        *(_observe(svc, alias, state) for alias in aliases), return_exceptions=True
    )
    conditions: list[Condition] = []
    for alias, found in zip(aliases, rounds, strict=True):
        if isinstance(found, BaseException):
            logger.error("monitor: %s failed", alias.name, exc_info=found)
        else:
            conditions += found
    state.forget_except(aliases)
    now = clock()  # one reading dates the round's events and its saved state
    events = state.transitions(conditions, now)
    outbox = Outbox(notify)
    for event in events:
        if not await outbox.send(monitor.EVENT, event):
            # Nobody heard it (an HTTP server between clients): keep the old verdicts, so
            # the next round finds the same change and pushes it again.
            logger.warning("monitor: no client for %s; will retry", event["id"])
            return []
    state.save(now)
    return events
