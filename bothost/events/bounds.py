"""Per-source bounds on pending events: how many one source may have waiting for a tick.

One producer must not fill the disk: an MCP server pushing unique ``event/*`` at full rate
wrote 1,974,000 pending rows (366 MB) in 30 s (issue 34). So a source may have at most
``tick.max_pending_per_source`` events pending (default 100,000: ~20 MB of rows); past
that its events are *held*: not queued, and the producer is answered
:class:`~bothost.api.SourceHeldError`. What a producer then does is its own: an MCP server
is read no more (:mod:`bothost.events.backpressure`: its events wait in its pipe, as when
the store fails), a webhook sender gets 429 with ``Retry-After``, ``bothost events push``
exits 1, a plugin's ``ingest_event`` raises. Nothing held was acknowledged, so nothing is
lost; the source is taken again once a tick has settled some of its events.

The check is the queue's, on the store thread, before each batch is written: every door
(MCP servers, webhooks, ``events push``, plugins) goes through it, and the store thread is
the one writer of a process, so a batch cannot take a source past its bound however many
producers race. Counting is cheap: each source's pending count is kept in memory, raised
by what each batch stored; the database (a partial index over pending events by source:
``events`` migration 2) is asked only when a batch could reach the bound, when the count is
older than :data:`REFRESH` (ticks settle events and other processes queue them), or, for a
held source, at most every :data:`RECHECK` seconds — until then the loop refuses its
events without a trip to the store thread.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from bothost.api import Receipt, SourceHeldError
from bothost.logs.rate import RateLimitedLog
from bothost.store.conn import Conn
from bothost.store.errors import row_errors

logger = logging.getLogger(__name__)

# Seconds a count from the database is trusted: ticks (here or in another process) settle
# events and other processes queue them; a count of 100,000 index entries takes ~15 ms
REFRESH = 10.0
# Seconds a held source's events are refused on the loop before its count is read again:
# an MCP server held retries every second (backpressure.HELD_RETRY), so it sees a tick's
# room within about that long, and a webhook flood at 429 costs one count a second
RECHECK = 1.0
HELD_RETRY_AFTER = 60  # seconds a held webhook sender is asked to wait (``Retry-After``)

COUNT = "SELECT count(*) FROM events WHERE source = ? AND status = 'pending'"


def value_errors() -> tuple[type[Exception], ...]:
    """What a value no row can hold raises when bound (per call, as the driver's part must
    be: see bothost.store.errors)."""
    return (ValueError, *row_errors())


class PendingBounds:
    """Which sources are at their bound; see the module docstring.

    ``held`` (source → when its count last said so, and that count) is written on the
    store thread and read on the event loop (single dict operations); the counts behind it
    are the store thread's alone.
    """

    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.clock = clock
        self.recheck = RECHECK
        self.held: dict[str, tuple[float, int]] = {}
        self._counts: dict[str, tuple[int, float]] = {}  # source → (pending, when counted)
        self.warnings = RateLimitedLog(logger)

    def refusal(self, source: str) -> SourceHeldError | None:
        """On the loop: the answer for an event of a source held a moment ago, or None
        when the store thread is to decide (not held, or time to count it again)."""
        found = self.held.get(source)
        if found is None or self.clock() - found[0] >= self.recheck:
            return None
        return self.error(source)

    def error(self, source: str) -> SourceHeldError:
        """The answer for an event of ``source``, which is at its bound."""
        pending = self.held.get(source, (0.0, self.limit))[1]
        return SourceHeldError(source, pending, self.limit, HELD_RETRY_AFTER)

    def admit(self, db: Conn, sources: Sequence[str]) -> list[bool] | None:
        """On the store thread, before a batch of events of ``sources`` is written: which
        of them may go in (in order, up to each source's room), or None for all of them."""
        wanted = Counter(sources)
        now = self.clock()
        room: dict[str, int] = {}
        for source, count in wanted.items():
            known = self._counts.get(source)
            if known is None or now - known[1] > REFRESH or known[0] + count > self.limit:
                try:
                    pending = db.execute(COUNT, (source,)).fetchone()[0]
                except value_errors():  # a name no row holds (a lone surrogate): its
                    continue  # events are refused one by one when written
                self._counts[source] = (pending, now)
                self._note(source, pending, now)
                if pending + count > self.limit:
                    room[source] = self.limit - pending
        if not room:
            return None
        admitted = []
        for source in sources:
            left = room.get(source)
            if left is not None:
                room[source] = left - 1
            admitted.append(left is None or left > 0)
        return admitted

    def stored(self, sources: Sequence[str], outcomes: Sequence[Any]) -> None:
        """On the store thread, after a batch was written: each source's count grows by the
        events of it that were queued (not deduped, not refused)."""
        added = Counter(sources)  # C speed; a row at a time only for a batch not all stored
        if set(map(type, outcomes)) != {int}:
            for source, outcome in zip(sources, outcomes, strict=True):
                if type(outcome) is not int and not (
                    isinstance(outcome, Receipt) and outcome.event_id
                ):
                    added[source] -= 1
        now = self.clock()
        for source, count in added.items():
            if not count:
                continue
            pending, at = self._counts.get(source, (0, now))
            self._counts[source] = (pending + count, at)
            if pending + count >= self.limit:  # full now: the loop refuses its next events
                self._note(source, pending + count, now)

    def _note(self, source: str, pending: int, now: float) -> None:
        """A fresh count: the source is held (warned once a minute) or taken again."""
        if pending >= self.limit:
            self.held[source] = (now, pending)
            self.warnings.warning(
                source,
                "events of %r are held: %d pending, the most tick.max_pending_per_source"
                " allows; its producer waits until a tick has taken some",
                source,
                pending,
            )
        elif self.held.pop(source, None) is not None:
            logger.info("events of %r are taken again: %d pending", source, pending)

    def refresh(self, db: Conn) -> dict[str, int]:
        """On the store thread: count the held sources again (a tick may have made room
        while they sent nothing) and return those still held, as :meth:`held_now`."""
        now = self.clock()
        for source in list(self.held):
            pending = db.execute(COUNT, (source,)).fetchone()[0]
            self._counts[source] = (pending, now)
            self._note(source, pending, now)
        return self.held_now()

    def held_now(self) -> dict[str, int]:
        """The sources held now, with their pending counts (``/healthz``, ``/metrics``)."""
        return {source: pending for source, (_, pending) in sorted(self.held.items())}


CLAIMS_PER_QUERY = 500  # ids per look-up: under the lowest parameter limit SQLite builds have


def claimed(db: Conn, claims: list[str]) -> set[str]:
    """Which of these once-only ids (webhook ids) were recorded before: their events are
    duplicates, answered so even at the bound (nothing new would be stored)."""
    found: set[str] = set()
    for start in range(0, len(claims), CLAIMS_PER_QUERY):
        some = claims[start : start + CLAIMS_PER_QUERY]
        marks = ", ".join(["?"] * len(some))
        try:
            rows = db.execute(f"SELECT id FROM webhook_ids WHERE id IN ({marks})", some)
            found.update(r[0] for r in rows)
        except value_errors():  # an id no row holds: none of these was recorded,
            pass  # and they are held like the rest
    return found
