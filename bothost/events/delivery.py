"""Getting a stored briefing to its targets, one ``deliveries`` row per target.

A target is an address (``slack:C0123``, ``web:briefings``, ``webhook:ops``, ``console:``).
The tick gets a ``deliver(target, briefing)`` callable; :func:`platform_deliver` builds one
from the host's platforms: every target, ``console:`` included, goes to the
``send_briefing`` of the platform named by its prefix. The console platform prints on the
standard output of the delivering process and flushes before it returns, because returning
is what lets the tick record the delivery: a process killed after that record must already
have shown the text. Each attempt has a deadline and its outcome is recorded before the
next target is tried, so a crash loses at most the record of the one delivery in flight
(which is then sent again: at least once). A target that lets its deadline pass is not
waited on again in the same tick (a hanging Slack costs one deadline per tick, not one per
briefing to retry), so the other targets are never held up for long.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from bothost.events import ledger
from bothost.events.faults import kill_point
from bothost.models import Address, Briefing
from bothost.platform import SEND_DEADLINE

logger = logging.getLogger(__name__)

Deliver = Callable[[str, Briefing], Awaitable[Any]]
DELIVERY_TIMEOUT = SEND_DEADLINE  # a platform slower than this is failing; the next tick retries


class UnknownTargetError(Exception):
    """No platform serves the target's prefix."""


def to_console(briefing: Briefing) -> bool:
    """Whether ``console:`` is among the briefing's targets."""
    return any(target.partition(":")[0] == "console" for target in briefing.targets)


def platform_deliver(platforms: Mapping[str, Any]) -> Deliver:
    """A ``deliver`` callable routing each target to ``platforms[prefix].send_briefing``."""

    async def deliver(target: str, briefing: Briefing) -> Any:
        address = Address.parse(target)
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
    owner: str,
    timeout: float | None = None,
    unanswered: dict[str, str] | None = None,
    shown: Mapping[int, str | None] | None = None,
) -> str:
    """Try every outstanding target once, record each outcome; the briefing's new status.

    ``unanswered`` (target → error), shared by the deliveries of one tick, collects the
    targets that let a deadline pass; they are not tried again while it is shared.
    ``shown`` (event id → priority) are the events of a briefing the tick has just made,
    which are settled with it (:func:`bothost.events.ledger.finish_briefing`).

    ``renew`` renews the tick's lease and raises
    :class:`~bothost.crosshost.lease.LeaseLostError` when another runner holds it: it runs
    before every send, so a tick whose lease was taken over sends nothing more (the new
    holder sends what is outstanding), and after every recorded outcome. A delivery that
    did happen is recorded whoever holds the lease: it is a fact, and it spares the new
    holder a second copy."""
    assert briefing.id is not None
    timeout = DELIVERY_TIMEOUT if timeout is None else timeout
    bid = briefing.id
    for delivery_id, target in await store.run(lambda db: ledger.outstanding(db, bid)):
        error, ref = None, None
        if unanswered is not None and target in unanswered:
            # waited out once this tick: waiting again, once per briefing to retry, would
            # hold every other target's deliveries up; it counts as an attempt, so each
            # briefing still reaches max_attempts and is reported
            error = f"not tried: {unanswered[target]} earlier in this tick"
        else:
            await renew()  # the fence: only the lease's holder sends
            kill_point("sending")
            try:
                async with asyncio.timeout(timeout):
                    result = deliver(target, briefing)
                    ref = await result if inspect.isawaitable(result) else result
            except TimeoutError:
                error = f"TimeoutError: no answer within {timeout:g} s"
                if unanswered is not None:
                    unanswered[target] = error
                logger.warning("briefing %s to %s failed: %s", bid, target, error)
            except Exception as exc:  # one target failing must not stop the others
                error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                logger.warning("briefing %s to %s failed: %s", bid, target, error)
        if error is None:
            kill_point("sent")
        ref_text = None if ref is None else str(ref)
        await store.run(
            lambda db, d=delivery_id, e=error, r=ref_text: ledger.record_delivery(
                db, d, e, r, clock(), max_attempts
            )
        )
        kill_point("delivery-recorded")
        await renew()
    status = await store.run(lambda db: ledger.finish_briefing(db, bid, owner, shown))
    kill_point("settled")
    return status
