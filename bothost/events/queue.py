"""The event queue: durable intake of pushed events, deduped, batched into SQLite.

Producers (MCP servers' ``event/*`` notifications, webhooks, ``bothost events push``) call
``await queue.ingest(event)``. Ingestion hands the event to one writer task per event loop,
which writes whatever has gathered in one transaction on the
store thread: one fsync per burst instead of per event is what keeps thousands of events
per second cheap. Inside that transaction each event is deduped against the events of the
last ``tick.dedupe_window``. Oversized payloads are refused (and logged) before they reach
the writer. The host runs the ``event_received`` hooks before calling ``ingest``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from bothost.config import TickConfig
from bothost.events.dedupe import canonical_json, dedupe_key
from bothost.events.triage import rule_priority
from bothost.models import Event
from bothost.store.db import transaction

logger = logging.getLogger(__name__)

MAX_PAYLOAD_BYTES = 256 * 1024  # a briefing needs a summary, not a mailbox; bigger is a bug
BATCH_MAX = 5000  # rows per transaction, so one huge burst never holds the lock for long


@dataclass
class _Row:
    event: Event
    payload: str
    key: str
    urgent: bool
    future: asyncio.Future[int | None]


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
        self.max_payload = max_payload
        self._rows: list[_Row] = []
        self._inflight: list[_Row] = []  # the batch on the store thread right now
        self._wake: asyncio.Event | None = None
        self._writer: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def ingest(self, event: Event) -> int | None:
        """Queue one event; its row id, or None when deduped or refused."""
        future = self._submit(event)
        return await future

    async def ingest_many(self, events: Iterable[Event]) -> list[int | None]:
        """Queue several events at once; one result per event, in order."""
        futures = [self._submit(event) for event in events]
        return [await future for future in futures]

    def _submit(self, event: Event) -> asyncio.Future[int | None]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[int | None] = loop.create_future()
        row = self._prepare(event, future)
        if row is None:
            future.set_result(None)
            return future
        self._rows.append(row)
        self._ensure_writer(loop)
        assert self._wake is not None
        self._wake.set()
        return future

    def _prepare(self, event: Event, future: asyncio.Future[int | None]) -> _Row | None:
        payload = canonical_json(event.payload)
        size = len(payload.encode("utf-8"))
        if size > self.max_payload:
            logger.warning(
                "event refused: payload of %s %s is %d bytes (limit %d)",
                event.source, event.type, size, self.max_payload,
            )
            return None
        urgent = rule_priority(event.source, event.type, event.payload, self.config.rules) == (
            "urgent"
        )
        return _Row(event, payload, dedupe_key(event, payload), urgent, future)

    def _ensure_writer(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._writer is None or self._writer.done() or self._loop is not loop:
            self._loop = loop
            self._wake = asyncio.Event()
            self._writer = loop.create_task(self._write_loop(), name="bothost-event-writer")

    async def _write_loop(self) -> None:
        assert self._wake is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            # one pass of the loop lets producers that are ready now join this batch;
            # later ones gather while it is written (group commit, no fixed delay)
            await asyncio.sleep(0)
            while self._rows:
                batch, self._rows = self._rows[:BATCH_MAX], self._rows[BATCH_MAX:]
                self._inflight = batch
                try:
                    await self._write(batch)
                finally:
                    self._inflight = []

    async def _write(self, batch: list[_Row]) -> None:
        window = self.config.dedupe_window
        try:
            ids = await self.store.run(lambda db: insert_batch(db, batch, window))
        except asyncio.CancelledError:
            for row in batch:
                row.future.cancel()
            raise
        except Exception as exc:  # the writer outlives a failed batch; its callers see why
            logger.exception("event batch of %d could not be written", len(batch))
            for row in batch:
                if not row.future.done():
                    row.future.set_exception(exc)
            return
        for row, row_id in zip(batch, ids, strict=True):
            if not row.future.done():
                row.future.set_result(row_id)
        if self.on_urgent and any(row.urgent and i for row, i in zip(batch, ids, strict=True)):
            try:
                self.on_urgent()
            except Exception:
                logger.exception("on_urgent callback failed")

    async def close(self) -> None:
        """Write whatever is waiting or being written, then stop the writer task."""
        waiting = [row.future for row in [*self._inflight, *self._rows]]
        if waiting and self._writer and not self._writer.done():
            await asyncio.gather(*waiting, return_exceptions=True)
        if self._writer and not self._writer.done():
            self._writer.cancel()
            try:
                await self._writer
            except asyncio.CancelledError:
                pass
        self._writer = None


def insert_batch(db: sqlite_utils.Database, batch: list[_Row], window: float) -> list[int | None]:
    """Insert a burst in one transaction; None for each event seen within ``window``."""
    ids: list[int | None] = []
    with transaction(db) as conn:
        for row in batch:
            event = row.event
            seen = conn.execute(
                "SELECT 1 FROM events WHERE dedupe_key = ? AND received_at > ? LIMIT 1",
                (row.key, event.received_at - window),
            ).fetchone()
            if seen:
                ids.append(None)
                continue
            cursor = conn.execute(
                "INSERT INTO events (source, type, payload, received_at, dedupe_key, status,"
                " attempts) VALUES (?, ?, ?, ?, ?, 'pending', 0)",
                (event.source, event.type, row.payload, event.received_at, row.key),
            )
            ids.append(cursor.lastrowid)
    return ids


def decode_payload(text: str) -> dict[str, Any]:
    """A stored payload back as a mapping (a non-object payload is wrapped as ``value``)."""
    value = json.loads(text)
    return value if isinstance(value, dict) else {"value": value}
