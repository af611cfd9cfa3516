"""Events from producers that cannot send again: held and written again until stored.

A webhook sender retries what we refused (we answer 503 with ``Retry-After``), but an MCP
server's ``event/*`` notification has no acknowledgement: its watcher moves its position on
once the line is written to the pipe. An event the host has read and the store then failed
to take (a full disk, a database gone away) would be lost for good. So such events are
written again, with backoff, until the store takes them, and the caller's await lasts that
long: the MCP session does not read the server meanwhile, its pipe fills, and the server's
own writes wait. Events refused for what they are (:class:`EventRejectedError`: a lone
surrogate, a value the database refuses) are not the store's failure and are not retried.

Events of a source at its bound (:class:`SourceHeldError`, :mod:`bothost.events.bounds`)
are held the same way when nobody waits for an answer (the host's MCP servers): tried again
every :data:`HELD_RETRY` seconds until a tick has made room, the server unread meanwhile.
A command (``patience`` given) gets the held outcome at once: a tick, not a few seconds of
retries, is what makes room.
"""

from __future__ import annotations

import asyncio
import logging
import time

from bothost.api import EventRejectedError, SourceHeldError
from bothost.events.queue import EventOutcome, EventQueue
from bothost.models import Event

logger = logging.getLogger(__name__)

FIRST_RETRY = 0.5  # seconds; a passing failure (a lock, a failover) is over by then
MAX_RETRY = 30.0  # seconds; a full disk is freed by a person, so no need to poll faster
HELD_RETRY = 1.0  # seconds; one count of the source's pending events each (bounds.RECHECK)


def store_failed(outcome: EventOutcome) -> bool:
    """Whether the store, not the event or its source's bound, kept this outcome's event out."""
    return isinstance(outcome, Exception) and not isinstance(
        outcome, (EventRejectedError, SourceHeldError)
    )


async def ingest_until_stored(
    queue: EventQueue,
    events: list[Event],
    patience: float | None = None,
    once_id: str | None = None,
) -> list[EventOutcome]:
    """:meth:`EventQueue.ingest`, with what the store failed to take written again
    until it is in (or the caller is cancelled, as at shutdown); one outcome per event.

    With ``patience`` (seconds), no try starts after that long: what is still out keeps
    the store's error as its outcome (a command's user wants an answer, not a wait for a
    person to free a disk); a patience of 0 is one try (a webhook: its sender retries)."""
    give_up = None if patience is None else time.monotonic() + patience
    outcomes = await queue.ingest(events, once_id)
    delay = FIRST_RETRY
    # (an exception is rare: the C isinstance first, the call only for what is one)
    while failed := [
        i
        for i, o in enumerate(outcomes)
        if isinstance(o, Exception) and (store_failed(o) or held(o, patience))
    ]:
        failing = any(store_failed(outcomes[i]) for i in failed)  # else held alone
        if failing:
            if give_up is not None and time.monotonic() + delay > give_up:
                break
            logger.warning(
                "the store cannot take %d event(s) from %r (%s); holding them and trying"
                " again in %g s, not reading more from that source meanwhile",
                len(failed),
                events[failed[0]].source,
                outcomes[failed[0]],
                delay,
            )
        await asyncio.sleep(delay if failing else HELD_RETRY)  # (held: the bounds warn)
        if failing:
            delay = min(delay * 2, MAX_RETRY)
        again = await queue.ingest([events[i] for i in failed], once_id)
        for index, outcome in zip(failed, again, strict=True):
            outcomes[index] = outcome
        if failing and not any(store_failed(o) for o in again):
            logger.info("the store took the %d held event(s)", len(failed))
    return outcomes


def held(outcome: EventOutcome, patience: float | None) -> bool:
    """Whether a held event is tried again here: only where nobody waits for an answer."""
    return patience is None and isinstance(outcome, SourceHeldError)
