"""Getting a stored briefing to its targets, one ``deliveries`` row per target.

A target is an address (``slack:C0123``, ``web:briefings``, ``webhook:ops``, ``console:``).
The tick gets a ``deliver(target, briefing)`` callable; :func:`platform_deliver` builds one
from the host's platforms, with ``console:`` handled here: it prints to the standard output
of the delivering process and always succeeds. Each attempt has a deadline and its outcome
is recorded before the next target is tried, so a crash loses at most the record of the
one delivery in flight (which is then sent again: at least once).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TextIO

from bothost.events import ledger
from bothost.events.faults import kill_point
from bothost.models import Address, Briefing

logger = logging.getLogger(__name__)

Deliver = Callable[[str, Briefing], Awaitable[Any]]
DELIVERY_TIMEOUT = 60.0  # a platform slower than this is failing; the next tick retries


class UnknownTargetError(Exception):
    """No platform serves the target's prefix."""


async def console_delivery(target: str, briefing: Briefing, stream: TextIO | None = None) -> str:
    """Print the briefing on standard output (``console:`` targets).

    Written and flushed before returning, because returning is what lets the tick record
    the delivery: a process killed after that record must already have shown the text.
    """
    out = stream or sys.stdout
    out.write(briefing.text + "\n\n")
    out.flush()
    return "stdout"


def to_console(briefing: Briefing) -> bool:
    """Whether ``console:`` is among the briefing's targets."""
    return any(target.partition(":")[0] == "console" for target in briefing.targets)


def platform_deliver(platforms: Mapping[str, Any], stream: TextIO | None = None) -> Deliver:
    """A ``deliver`` callable routing each target to ``platforms[prefix].send_briefing``."""

    async def deliver(target: str, briefing: Briefing) -> Any:
        address = Address.parse(target)
        if address.platform == "console":
            return await console_delivery(target, briefing, stream)
        platform = platforms.get(address.platform)
        if platform is None:
            raise UnknownTargetError(f"no platform serves {target!r}")
        return await platform.send_briefing(address, briefing)

    return deliver


async def deliver_briefing(
    store: Any,
    briefing: Briefing,
    deliver: Deliver,
    *,
    clock: Callable[[], float],
    max_attempts: int,
    renew: Callable[[], Awaitable[None]],
    timeout: float = DELIVERY_TIMEOUT,
) -> str:
    """Try every outstanding target once, record each outcome; the briefing's new status."""
    assert briefing.id is not None
    bid = briefing.id
    for delivery_id, target in await store.run(lambda db: ledger.outstanding(db, bid)):
        error, ref = None, None
        kill_point("sending")
        try:
            async with asyncio.timeout(timeout):
                result = deliver(target, briefing)
                ref = await result if inspect.isawaitable(result) else result
        except Exception as exc:  # one target failing must not stop the others
            error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            logger.warning("briefing %s to %s failed: %s", bid, target, error)
        if error is None:
            kill_point("sent")
        ref_text = None if ref is None else str(ref)
        await store.run(lambda db, d=delivery_id, e=error, r=ref_text: ledger.record_delivery(
            db, d, e, r, clock(), max_attempts))
        kill_point("delivery-recorded")
        await renew()
    status = await store.run(lambda db: ledger.finish_briefing(db, bid))
    kill_point("settled")
    return status
