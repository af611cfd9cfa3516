"""The event queue: durable intake of pushed events, deduped, batched into the store.

Producers (MCP servers' ``event/*`` notifications, webhooks, ``bothost events push``,
plugins) reach it through :mod:`bothost.events.intake`, which runs the ``event_received``
hooks and calls ``await queue.ingest(events)``, the one way in. Ingestion adds the events
to the waiting rows and queues a writing job on the store thread unless one is queued
(after the loop's pass, or at once when :data:`EARLY_ROWS` are waiting, so a large burst
is written while the loop still takes it in); the job takes whatever is waiting when it
starts and writes it in one transaction: one commit per burst instead of per event is what
keeps thousands of events per second cheap, and the thread goes from one batch to the next
without a round trip through the event loop (see ``_drain``). Inside that transaction each
event is deduped against the events of the last ``tick.dedupe_window``.
Oversized payloads are refused (and logged) before they reach the store thread.

Rows are isolated inside the shared transaction: an event that cannot be stored (a lone
surrogate in its type, a payload that is not JSON, a value the database refuses) fails alone with
:class:`EventRejectedError` and one log line naming it, and its neighbours commit. Without
that, one bad event from one producer rolled back everyone's burst, and MCP events are not
re-sent. A failure of the store itself (disk full, I/O error) still fails the whole batch.
The batch is tried whole first (one dedupe query and a few multi-row inserts, as the
whole transaction) and, only when a row is refused, rolled back and redone row by row in a
new transaction, so isolation costs nothing in the common case.

An event sent with a once-only id (a webhook's ``webhook-id``: ``once_id``) claims the id
in ``webhook_ids`` in the same transaction as its insert: the claim and the
event commit or fail together, an id claimed before (by this host, another host on the same
database, or an earlier row of the same batch) queues nothing, and the sender is answered
after one shared commit instead of one store round trip per step.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bothost.api import MAX_EVENT_TYPE, EventRejectedError, Receipt  # Rejected: one event
from bothost.config import TickConfig
from bothost.events.bounds import PendingBounds, claimed
from bothost.events.dedupe import canonical_json, dedupe_key
from bothost.events.urgency import Urgency
from bothost.logs.rate import RateLimitedLog
from bothost.models import Event
from bothost.store.conn import POSTGRESQL, SQLITE, Conn
from bothost.store.errors import database_failures
from bothost.store.errors import row_errors as database_row_errors

logger = logging.getLogger(__name__)

MAX_PAYLOAD_BYTES = 256 * 1024  # a briefing needs a summary, not a mailbox; bigger is a bug
BATCH_MAX = 5000  # rows per transaction, so one huge burst never holds the lock for long
# Rows waiting that queue a job at once instead of after the loop's pass: a burst of
# thousands of producers is taken in during one pass, and its first rows are written (the
# GIL released inside SQLite, on the other core) while the loop prepares the rest, where
# the whole burst used to wait for the pass to end and the loop then sat idle through the
# first commit. Large enough that a batch's fixed cost (BEGIN, its look-up and COMMIT
# besides its INSERTs, each waiting for the GIL up to the switch interval while the loop
# is busy) is spread over many rows.
EARLY_ROWS = 1000
DUPLICATE = Receipt(duplicate=True)  # a once-only id claimed before: nothing queued
# Rows per multi-row INSERT on SQLite: a batch goes in as chunks of powers of two up to
# MAX_ROWS_PER_INSERT, or fewer where the build's parameter limit allows fewer (128 under
# 999, the lowest a build may have), e.g. 1,000 rows as 512 + 256 + 128 + 64 + 32 + 8.
# Each statement is the store thread taking the GIL back from the event loop after SQLite's
# work, which a busy loop gives up only every switch interval (5 ms): 199 rows a statement
# were 26 such waits for 5,000 rows, and one step per row (executemany) would be thousands.
# The few sizes are prepared once per connection and then come from the driver's statement
# cache (one statement sized to each batch was prepared anew each time: 15,300 instructions
# per event, callgrind). Preparing costs more per row than inserting does (SQLite 3.40:
# 3.2-4.8 µs per row of the statement against 2.4-2.7 µs per row inserted), so sizes up
# to 4,096 rows cost a fresh connection (the host's first burst, each round of
# bench/events.py) ~8,000 rows of prepares, more store-thread time than the 10,000 rows of
# a burst take to insert; up to 512 it is 1,023 rows, for a few statements more per big
# batch (written while the loop has taken its burst in and is waiting: no GIL wait).
ROWS_PER_INSERT = 128
MAX_ROWS_PER_INSERT = 512
COLUMNS_PER_ROW = 5
# Characters of payload per INSERT on PostgreSQL, where a batch's rows travel as one JSON
# parameter: 5,000 rows of the largest payloads allowed would be over a gigabyte, past what
# the server takes in one value; a typical burst of 5,000 small events is one statement.
PG_CHARS_PER_INSERT = 8 * 1024 * 1024


# What one event's own values can raise on the way in (encoding, binding, a constraint, a
# value over the database's limits); anything else (OperationalError: disk, locks, a lost
# connection) is the store's.
def row_errors() -> tuple[type[Exception], ...]:
    """Evaluated per exception, as the driver's part must be (see bothost.store.errors)."""
    return (ValueError, TypeError, OverflowError, RecursionError, *database_row_errors())


# a row id, None (deduped, refused), a Receipt (a claimed row), or why it failed
EventOutcome = int | None | Receipt | BaseException


class _Waiter:
    """Several events of one caller (:meth:`EventQueue.ingest`): their outcomes,
    handed over together in one future once the last of them has settled (a batch of N
    events costs one future, not N)."""

    __slots__ = ("future", "outcomes", "pending")

    def __init__(self, future: asyncio.Future[list[EventOutcome]], count: int) -> None:
        self.future = future
        self.outcomes: list[EventOutcome] = [None] * count
        self.pending = count

    def settle(self, index: int, outcome: EventOutcome) -> None:
        self.outcomes[index] = outcome
        self.pending -= 1
        if not self.pending and not self.future.done():  # done: its caller was cancelled
            self.future.set_result(self.outcomes)


@dataclass(slots=True)
class _Row:
    event: Event
    payload: str
    key: str
    # who hears the outcome: a lone event's own future (no object between it and the
    # batch), or the waiter of a caller's several events, at ``index``
    answer: asyncio.Future[EventOutcome] | _Waiter
    index: int = 0
    claim: str | None = None  # the once-only id this row claims with its insert

    def future(self) -> asyncio.Future[Any]:
        """The future its caller awaits."""
        answer = self.answer
        return answer.future if isinstance(answer, _Waiter) else answer


class EventQueue:
    """Deduped, batched ingestion of events into the ``events`` table."""

    def __init__(
        self,
        store: Any,
        tick_config: TickConfig,
        *,
        on_urgent: Callable[[], Any] | None = None,
        max_payload: int = MAX_PAYLOAD_BYTES,
    ) -> None:
        self.store = store
        self.config = tick_config
        self.on_urgent = on_urgent  # the host sets this to ``ticker.poke``
        self.urgency = Urgency(tick_config)  # which stored events call on_urgent
        self.max_payload = max_payload
        self.bounds = PendingBounds(tick_config.max_pending_per_source)  # per source
        # refusals are what a producer repeats at will (issue 34: 228,713 lines in 30 s from
        # one server): one line per source and minute, with a count
        self.refusals = RateLimitedLog(logger)
        # rows waiting for the store thread: appended on the event loop, taken by the store
        # thread when its job starts, so the lock is held by one side at a time, briefly
        self._rows: list[_Row] = []
        self._taking = threading.Lock()
        self._queued = False  # a writing job is queued on the store thread, not started
        self._passing = False  # a loop is to queue one after its pass
        self._queuing_on: asyncio.AbstractEventLoop | None = None  # that loop
        self._inflight: list[_Row] = []  # the batch on the store thread right now
        # the loop of the rows waiting, unless some are of another one (a loop that stopped
        # and a new one, as a test or a restarted host has): checked once per add, so a
        # batch needs no look at each row's loop to be handed back
        self._rows_loop: asyncio.AbstractEventLoop | None = None
        self._mixed = False

    async def ingest(
        self, events: Sequence[Event], once_id: str | None = None
    ) -> list[EventOutcome]:
        """Queue events and wait for all of them: the queue's one way in (producers reach it
        through :mod:`bothost.events.intake`). One outcome per event, in order: its row id,
        None (deduped or refused), a :class:`~bothost.api.SourceHeldError` (its source at
        its bound), or the error that kept it out (an :class:`EventRejectedError`, or the
        store's own failure). Nothing is raised for an event: the caller sees each one's fate.

        ``once_id`` (one event only: a webhook's id) is claimed in the same transaction as
        the insert (it is the event's dedupe key unless it has one); the outcome is then the
        row id or :data:`DUPLICATE`, and a failure leaves the id unclaimed, so the sender's
        retry counts.
        """
        if len(events) == 1:  # a producer's one event (a notification, a webhook): its own
            # future is what the batch settles, with no waiter or list around it
            event = events[0]
            if once_id is not None and event.dedupe_key is None:  # the id names the occurrence
                event = replace(event, dedupe_key=once_id)
            return [await self._submit_one(event, once_id)]
        if once_id is not None:
            raise ValueError("a once-only id names one event")
        loop = asyncio.get_running_loop()
        waiter = _Waiter(loop.create_future(), len(events))
        rows = []
        held = self.bounds.held  # empty but for a source at its bound: one look per batch
        for index, event in enumerate(events):
            if held and (refusal := self.bounds.refusal(event.source)) is not None:
                waiter.settle(index, refusal)
                continue
            try:
                row = self._prepare(event, waiter, index)
            except row_errors() as exc:  # this event alone: never let it reach a shared batch
                waiter.settle(index, rejected(event, exc, self.refusals))
                continue
            if row is None:
                waiter.settle(index, None)
            else:
                rows.append(row)
        if rows:
            self._add(rows, loop)
        elif not events:
            waiter.future.set_result([])
        return await waiter.future

    def _submit_one(self, event: Event, claim: str | None = None) -> asyncio.Future[EventOutcome]:
        # one event: the same rows and batches as several, its future in place of a waiter
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        if self.bounds.held and (refusal := self.bounds.refusal(event.source)) is not None:
            future.set_result(refusal)  # held a moment ago: no trip to the store thread
            return future
        try:
            row = self._prepare(event, future, 0, claim)
        except row_errors() as exc:  # this event alone: never let it reach a shared batch
            future.set_result(rejected(event, exc, self.refusals))
            return future
        if row is None:
            future.set_result(None)
        else:
            self._add(row, loop)
        return future

    def _add(self, rows: _Row | list[_Row], loop: asyncio.AbstractEventLoop) -> None:
        """Add one row (a producer's event: no list around it) or a caller's several."""
        with self._taking:
            if not self._rows:
                self._rows_loop, self._mixed = loop, False
            elif loop is not self._rows_loop:  # rows of two loops waiting (a rare case)
                self._mixed = True
            if isinstance(rows, _Row):
                self._rows.append(rows)
            else:
                self._rows += rows
            if self._queued:  # the queued job takes these rows too
                return
            if len(self._rows) >= EARLY_ROWS:  # a burst: write what is here during the pass
                self._queued = True
                self.store.submit(self._drain)
            # else after one pass of the loop (producers that are ready now join it), unless
            # that pass is to come; or another loop was to queue it and may have stopped first
            elif not self._passing or self._queuing_on not in (None, loop):
                self._passing, self._queuing_on = True, loop
                loop.call_soon(self._queue_job, loop)

    def _prepare(
        self,
        event: Event,
        answer: asyncio.Future[EventOutcome] | _Waiter,
        index: int,
        claim: str | None = None,
    ) -> _Row | None:
        if len(event.type) > MAX_EVENT_TYPE:  # every producer's bound: raised as the row's own
            raise ValueError(
                f"its type is {len(event.type):,} characters (at most {MAX_EVENT_TYPE})"
            )
        payload = canonical_json(event.payload)
        # encoding finds a lone surrogate here, before the event can reach a shared batch;
        # ASCII text (a flag CPython keeps on the string) holds none and is its own length
        size = len(payload) if payload.isascii() else len(payload.encode("utf-8"))
        if size > self.max_payload:
            self.refusals.warning(
                event.source,
                "event refused: payload of %r %s is %d bytes (limit %d)",
                event.source,
                shown_type(event.type),
                size,
                self.max_payload,
            )
            return None
        return _Row(event, payload, dedupe_key(event, payload), answer, index, claim)

    # --- the group commit: on the store thread -------------------------------------------
    #
    # Each job takes the rows waiting when it starts, not when it was queued: rows arriving
    # while the thread writes the batch before join the next one, and the thread goes from
    # one commit to the next without waiting for the event loop to take the next batch (a
    # busy loop answers a thread's call only after the callbacks it is running; that round
    # trip per batch was most of a webhook's latency, issue 19). The outcomes go back to the
    # loop in one callback per batch.

    def _queue_job(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._taking:
            if self._queuing_on is loop:
                self._passing, self._queuing_on = False, None
            if self._queued or not self._rows:  # a job queued during the pass takes them
                return
            self._queued = True
        self.store.submit(self._drain)

    def _drain(self, db: Conn) -> None:
        """The store thread's job: write the rows waiting now, at most :data:`BATCH_MAX`."""
        with self._taking:
            self._queued = False
            batch = self._rows[:BATCH_MAX]
            del self._rows[:BATCH_MAX]
            loop = None if self._mixed else self._rows_loop  # None: each row's own
            if self._rows:  # more than a batch: the rest next, behind other jobs
                self._queued = True
                self.store.submit(self._drain)
            self._inflight = batch
        if not batch:
            return
        if self.on_urgent is not None:  # the rules its settling asks, fresh (store thread)
            self.urgency.refresh(db)
        try:
            sources = [row.event.source for row in batch]  # once: the bounds' two looks
            batch, sources = self._admit(db, batch, sources, loop)
            if not batch:
                return
            outcomes = insert_batch(db, batch, self.config.dedupe_window, self.refusals)
        except Exception as exc:  # the batch's callers see why; the store records the failure
            # the database failing (a full disk, a lock, a server gone) is each caller's to
            # report in its own words (a 503, a retry's warning, a command's last line): its
            # traceback goes to the host's log file and a command's -v, not to a terminal at
            # every retry. Anything else is a bug of ours, and loud.
            failing = isinstance(exc, database_failures())
            logger.log(
                logging.INFO if failing else logging.ERROR,
                "event batch of %d could not be written: %s",
                len(batch),
                exc,
                exc_info=True,
            )
            self._hand_back(batch, exc, loop)
            raise
        else:
            self._hand_back(batch, outcomes, loop)
            self.bounds.stored(sources, outcomes)
        finally:
            with self._taking:
                self._inflight = []

    def _admit(
        self,
        db: Conn,
        batch: list[_Row],
        sources: list[str],
        loop: asyncio.AbstractEventLoop | None,
    ) -> tuple[list[_Row], list[str]]:
        """The batch's rows within their sources' bounds (:mod:`bothost.events.bounds`), and
        their sources; the rest are answered :class:`~bothost.api.SourceHeldError` now
        (store thread)."""
        admitted = self.bounds.admit(db, sources)
        if admitted is None:
            return batch, sources
        # a sender's retry of an id queued before is answered a duplicate, bound or not
        claims = [row.claim for row, ok in zip(batch, admitted, strict=True) if not ok]
        known = claimed(db, [c for c in claims if c is not None])
        kept: list[_Row] = []
        held: list[_Row] = []
        for row, ok in zip(batch, admitted, strict=True):
            (kept if ok or row.claim in known else held).append(row)
        self._hand_back(held, [self.bounds.error(row.event.source) for row in held], loop)
        return kept, [row.event.source for row in kept]

    def _hand_back(
        self,
        batch: list[_Row],
        outcomes: Sequence[EventOutcome] | BaseException,
        loop: asyncio.AbstractEventLoop | None,
    ) -> None:
        """Settle the batch's rows on their event loop, in one callback (store thread);
        ``loop`` is every row's, or None to look at each row's (rows of two loops)."""
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self._settle, batch, outcomes)
            except RuntimeError:  # the loop has closed: nobody is waiting for these rows
                pass
            return
        loops = {row.future().get_loop() for row in batch}
        for loop in loops:
            if len(loops) == 1:
                part, results = batch, outcomes
            else:
                kept = [i for i, r in enumerate(batch) if r.future().get_loop() is loop]
                part = [batch[i] for i in kept]
                results = (
                    outcomes if isinstance(outcomes, BaseException) else [outcomes[i] for i in kept]
                )
            try:
                loop.call_soon_threadsafe(self._settle, part, results)
            except RuntimeError:  # the loop has closed: nobody is waiting for these rows
                pass

    def _settle(self, batch: list[_Row], outcomes: Sequence[EventOutcome] | BaseException) -> None:
        """Hand each row its outcome (event loop); poke the ticker for an urgent one."""
        failed = isinstance(outcomes, BaseException)
        if isinstance(outcomes, BaseException):  # the whole batch's
            outcomes = [outcomes] * len(batch)
        # an urgent row stored (a row id), seen in the one pass over the batch: the rules
        # are asked of stored rows only (not of repeats), until the first urgent one, and
        # not at all without anyone to poke (`bothost events push`)
        urgent = self.on_urgent is None
        for row, outcome in zip(batch, outcomes, strict=True):
            answer = row.answer  # inline, not a method: this runs once per event
            if isinstance(answer, _Waiter):
                answer.settle(row.index, outcome)
            elif not answer.done():  # done: its caller was cancelled
                answer.set_result(outcome)
            if not urgent and type(outcome) is int:
                event = row.event
                urgent = self.urgency.urgent(event.source, event.type, event.payload)
        if failed:
            return
        if urgent and self.on_urgent:
            try:
                self.on_urgent()
            except Exception:
                logger.exception("on_urgent callback failed")

    async def close(self) -> None:
        """Wait until whatever is waiting or being written has been written."""
        loop = asyncio.get_running_loop()
        with self._taking:
            rows = [*self._inflight, *self._rows]
        waiting = list({id(f): f for f in (r.future() for r in rows)}.values())
        ours = [f for f in waiting if f.get_loop() is loop]
        if ours:
            await asyncio.gather(*ours, return_exceptions=True)
        if len(ours) < len(waiting):  # another loop's rows: answered there, if it still runs
            await self._written({id(r) for r in rows})

    async def _written(self, rows: set[int]) -> None:
        """Wait until the store thread has taken and written the rows of these ids: a job
        queued behind theirs runs after them (one thread, jobs in order)."""
        while True:
            self._queue_job(asyncio.get_running_loop())  # theirs, if their loop stopped first
            await self.store.run(lambda db: None)
            with self._taking:
                if not any(id(r) in rows for r in (*self._inflight, *self._rows)):
                    return


Outcome = int | None | Receipt | EventRejectedError  # one row's, as insert_batch gives it


def insert_batch(
    db: Conn, batch: list[_Row], window: float, refusals: RateLimitedLog
) -> list[Outcome]:
    """Insert a burst in one transaction; per event its row id, None when seen within
    ``window``, or the :class:`EventRejectedError` of an event that cannot be stored (logged
    to ``refusals``)."""
    # The batch goes in whole, a few statements in all (on PostgreSQL each one a round
    # trip; on SQLite each one the store thread taking the GIL back from a busy event loop,
    # which lets go of it only every switch interval). A refused row, or ids that cannot be
    # told apart, rolls the attempt back whole and the batch is redone row by row in a new
    # transaction, so isolation costs nothing in the common case. There is no savepoint
    # around the attempt: on PostgreSQL a failed statement aborts the transaction anyway
    # (and a savepoint per row from the start costs it dearly past 64 in one transaction,
    # when its subtransaction cache overflows); on SQLite a savepoint and its release were
    # two statements more per batch, each a wait for the GIL (issue 19).
    try:
        with db.transaction() as conn:
            return _insert_together(conn, batch, window)
    except _RowByRow:
        pass  # rolled back: the rows go in one by one, each with its own id
    except row_errors():
        pass  # rolled back whole: again, each row on its own (the store's own failure, a
        # full disk, is no row error: it fails the batch above and again below)
    with db.transaction() as conn:
        return _insert_each(conn, batch, window, refusals)


class _RowByRow(Exception):
    """The batch is redone row by row: its rows went in but their ids cannot be told apart,
    or its keys cannot be looked up as one JSON list."""


def json_list(values: list[str]) -> str:
    """Keys or ids as the one JSON parameter ``conn.texts`` reads. A NUL in one would be
    cut there by SQLite's JSON functions (``a\\0b`` looked up as ``a``: a duplicate let in,
    or a different key taken for it): such a batch is redone row by row, each key bound
    whole (PostgreSQL's text holds no NUL: such a row is refused there either way)."""
    text = json.dumps(values)
    if "\\u0000" in text:  # also matches an escaped backslash before u0000: only slower
        raise _RowByRow
    return text


def _insert_together(conn: Conn, batch: list[_Row], window: float) -> list[Outcome]:
    # Writing under the write lock (SQLite's BEGIN IMMEDIATE, PostgreSQL's advisory lock):
    # the batch's keys are looked up in one query, deduped here, and the new rows go in
    # with a few multi-row INSERTs; a statement per row (its dedupe inside the INSERT) cost
    # three times as much on SQLite, and a round trip per event on PostgreSQL
    texts = conn.texts  # the batch's keys and claims, each list one parameter
    oldest = min(row.event.received_at for row in batch) - window
    seen = (
        f"SELECT dedupe_key, max(received_at) FROM events WHERE dedupe_key IN ({texts})"
        " AND received_at > ? GROUP BY dedupe_key"
    )
    if conn.dialect == SQLITE:  # and the largest id now, in the same statement (see below)
        seen += " UNION ALL SELECT NULL, max(id) FROM events"
    latest: dict[str | None, float] = dict(
        conn.execute(seen, (json_list([row.key for row in batch]), oldest)).fetchall()
    )
    before = int(latest.pop(None, None) or 0)  # SQLite's largest id before the batch
    claims = [row.claim for row in batch if row.claim is not None]
    taken: set[str] = set()  # once-only ids claimed already, in the table or by an earlier row
    if claims:
        taken = {
            i
            for (i,) in conn.execute(
                f"SELECT id FROM webhook_ids WHERE id IN ({texts})", (json_list(claims),)
            )
        }
    new_claims: list[tuple[str, float]] = []
    outcomes: list[Outcome] = [None] * len(batch)
    fresh: list[int] = []  # positions in the batch of the rows to insert
    for position, row in enumerate(batch):
        at, last = row.event.received_at, latest.get(row.key)
        if row.claim is not None:  # the same outcomes as _insert_claimed's
            if row.claim in taken:
                outcomes[position] = DUPLICATE
                continue
            taken.add(row.claim)
            new_claims.append((row.claim, at))
        # the same test as _insert_event's NOT EXISTS, against the table and earlier rows
        if last is not None and last > at - window:
            if row.claim is not None:
                outcomes[position] = DUPLICATE
            continue
        latest[row.key] = at if last is None else max(last, at)
        fresh.append(position)
    # multi-row too, as the events below: executemany steps once per claim, giving up and
    # retaking the GIL each time; a conflict after the check above is a row error (the
    # batch is then redone row by row)
    if conn.dialect == POSTGRESQL and new_claims:  # one statement, as its events below
        conn.execute(
            "INSERT INTO webhook_ids (id, received_at)"
            " SELECT c->>0, (c->>1)::float8 FROM json_array_elements(?::json) AS c",
            (json.dumps(new_claims),),
        )
        new_claims = []
    for start in range(0, len(new_claims), ROWS_PER_INSERT):
        some = new_claims[start : start + ROWS_PER_INSERT]
        conn.execute(
            "INSERT INTO webhook_ids (id, received_at) VALUES " + ", ".join(["(?, ?)"] * len(some)),
            [value for claim in some for value in claim],
        )
    if not fresh:
        return outcomes
    if conn.dialect == POSTGRESQL:
        return _insert_returning(conn, batch, fresh, outcomes)
    # The write lock is ours, so each new row's id is one more than the largest before it:
    # the batch's ids are the next len(fresh) numbers, in the order inserted. The last
    # INSERT's last id and the count of rows the statements changed (triggers' rows
    # included) confirm it without a statement more: a trigger adding or removing rows, or
    # ids drawn at random once the largest is taken, fail the check and the batch goes in
    # row by row instead.
    changes = conn.changes
    per_insert, start, last = rows_per_insert(conn), 0, None
    while start < len(fresh):
        size = min(per_insert, 1 << ((len(fresh) - start).bit_length() - 1))
        chunk = [batch[p] for p in fresh[start : start + size]]
        start += size
        last = conn.execute(  # status and attempts are the columns' defaults: a third
            # less to prepare than each row's own 'pending' and 0
            "INSERT INTO events (source, type, payload, received_at, dedupe_key)"
            " VALUES " + ", ".join(["(?, ?, ?, ?, ?)"] * len(chunk)),
            [
                value
                for row in chunk
                for value in (
                    row.event.source,
                    row.event.type,
                    row.payload,
                    row.event.received_at,
                    row.key,
                )
            ],
        ).lastrowid
    if conn.changes - changes != len(fresh) or last != before + len(fresh):
        raise _RowByRow
    for row_id, position in enumerate(fresh, before + 1):
        outcomes[position] = row_id
    return outcomes


def rows_per_insert(conn: Conn) -> int:
    """The rows one SQLite INSERT of the batch takes at most: :data:`MAX_ROWS_PER_INSERT`,
    or the most rows of :data:`COLUMNS_PER_ROW` parameters one statement may bind here if
    fewer, a power of two."""
    raw = getattr(conn, "raw", None)  # the driver's connection (SQLite's)
    try:
        limit = raw.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)  # type: ignore[union-attr]
    except (AttributeError, sqlite3.Error):  # an older driver, or no SQLite connection here
        return ROWS_PER_INSERT
    return max(
        ROWS_PER_INSERT,
        min(MAX_ROWS_PER_INSERT, 1 << ((limit // COLUMNS_PER_ROW).bit_length() - 1)),
    )


def _insert_returning(
    conn: Conn, batch: list[_Row], fresh: list[int], outcomes: list[Outcome]
) -> list[Outcome]:
    """PostgreSQL: the fresh rows in as few INSERTs as :data:`PG_CHARS_PER_INSERT` allows
    (one for a burst of small events), each row's id from RETURNING.

    The rows travel as one JSON parameter: a multi-row VALUES of thousands of placeholders
    spent most of the batch in psycopg parsing the statement's text (it caches only short
    ones) and the server planning it. RETURNING's order is not promised, but the identity
    column draws one id per row in the order the rows are inserted (the JSON's, by
    ORDER BY), so the ids sorted are the rows' in order; the keys returned beside them
    confirm it, and a mismatch redoes the batch row by row."""
    start = 0
    while start < len(fresh):  # as many rows per statement as PG_CHARS_PER_INSERT allows
        end, chars = start + 1, len(batch[fresh[start]].payload)
        while end < len(fresh) and chars + len(batch[fresh[end]].payload) <= PG_CHARS_PER_INSERT:
            chars += len(batch[fresh[end]].payload)
            end += 1
        _insert_json(conn, batch, fresh[start:end], outcomes)
        start = end
    return outcomes


def _insert_json(
    conn: Conn, batch: list[_Row], positions: list[int], outcomes: list[Outcome]
) -> None:
    chunk = [batch[p] for p in positions]
    returned = conn.execute(
        "INSERT INTO events (source, type, payload, received_at, dedupe_key, status, attempts)"
        " SELECT r->>0, r->>1, r->>2, (r->>3)::float8, r->>4, 'pending', 0"
        " FROM json_array_elements(?::json) WITH ORDINALITY AS rows(r, n) ORDER BY n"
        " RETURNING id, dedupe_key",
        (
            json.dumps(
                [
                    (row.event.source, row.event.type, row.payload, row.event.received_at, row.key)
                    for row in chunk
                ]
            ),
        ),
    ).fetchall()
    returned.sort()
    if [key for _, key in returned] != [row.key for row in chunk]:
        raise _RowByRow
    for position, (row_id, _) in zip(positions, returned, strict=True):
        outcomes[position] = row_id


def _insert_each(
    conn: Conn, batch: list[_Row], window: float, refusals: RateLimitedLog
) -> list[Outcome]:
    """Each row on its own, inside the caller's transaction: a refused row fails alone."""
    outcomes: list[Outcome] = []
    for row in batch:
        try:
            if conn.dialect == POSTGRESQL:
                # a failed statement aborts a PostgreSQL transaction: each row gets a
                # savepoint, which SQLite (undoing a failed statement alone) does not need
                with conn.transaction():
                    outcomes.append(_insert_row(conn, row, window))
            else:
                outcomes.append(_insert_row(conn, row, window))
        except row_errors() as exc:
            # the failed statement alone is undone and the transaction goes on; if the
            # database rolled back the whole transaction instead, the failure is the store's
            if not conn.in_transaction:
                raise
            outcomes.append(rejected(row.event, exc, refusals))
    return outcomes


def _insert_row(conn: Conn, row: _Row, window: float) -> int | None | Receipt:
    if row.claim is not None:
        return _insert_claimed(conn, row, row.claim, window)
    return _insert_event(conn, row, window)


def _insert_claimed(conn: Conn, row: _Row, claim: str, window: float) -> int | Receipt:
    """Claim the row's once-only id, then insert its event; DUPLICATE if either was there."""
    claimed = conn.execute(
        "INSERT INTO webhook_ids (id, received_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING",
        (claim, row.event.received_at),
    ).rowcount
    if not claimed:
        return DUPLICATE
    try:
        row_id = _insert_event(conn, row, window)
    except row_errors():
        # the claim falls with its event: PostgreSQL rolls back the row's savepoint, while
        # SQLite undoes only the failed statement, so the claim is taken back here
        if conn.dialect == SQLITE and conn.in_transaction:
            conn.execute("DELETE FROM webhook_ids WHERE id = ?", (claim,))
        raise
    # an event with this key queued without its claim (before claims and events were one
    # write, or after the claim was pruned): the sender's retry, now recorded
    return DUPLICATE if row_id is None else row_id


def _insert_event(conn: Conn, row: _Row, window: float) -> int | None:
    # one statement per row: statement atomicity is what isolates the rows, and one round
    # trip per row is what keeps a burst fast on a database server
    event = row.event
    return conn.value(
        "INSERT INTO events (source, type, payload, received_at, dedupe_key, status, attempts)"
        " SELECT ?, ?, ?, ?, ?, 'pending', 0 WHERE NOT EXISTS"
        " (SELECT 1 FROM events WHERE dedupe_key = ? AND received_at > ?) RETURNING id",
        (
            event.source,
            event.type,
            row.payload,
            event.received_at,
            row.key,
            row.key,
            event.received_at - window,
        ),
    )


def rejected(event: Event, cause: BaseException, refusals: RateLimitedLog) -> EventRejectedError:
    """The error for one event that cannot be stored, logged with what it was (one line per
    source and minute: see :mod:`bothost.logs.rate`)."""
    # repr, so a lone surrogate or a control character in a name cannot break the log line
    reason = f"{type(cause).__name__}: {cause}"
    kind = shown_type(event.type)
    refusals.warning(
        event.source, "event refused: %r %s cannot be stored (%s)", event.source, kind, reason
    )
    error = EventRejectedError(f"event {event.source!r} {kind} cannot be stored: {reason}")
    error.__cause__ = cause
    return error


def shown_type(kind: str) -> str:
    """An event's type as a log line or an error names it: its repr, cut at the bound."""
    if len(kind) <= MAX_EVENT_TYPE:
        return repr(kind)
    return f"{kind[:MAX_EVENT_TYPE]!r}… ({len(kind):,} characters)"


def decode_payload(text: str) -> dict[str, Any]:
    """A stored payload back as a mapping (a non-object payload is wrapped as ``value``);
    a ``NaN`` or ``Infinity`` stored before they were refused reads as that text, a string,
    so whatever is made of it (a prompt, ``events list --json``) is JSON."""
    value = json.loads(text, parse_constant=str)
    return value if isinstance(value, dict) else {"value": value}
