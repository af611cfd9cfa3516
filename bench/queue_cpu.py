"""CPU per event of the event queue alone: ``EventQueue.ingest`` into SQLite.

The process's CPU (both threads: the event loop preparing rows, the store thread writing
them), so a machine shared with other work moves it less than a wall-clock rate: batches
of 5,000 events of four sources (an MCP server's backlog, a burst), and one event per batch
(a webhook at a time). Best of three runs each. Used to price the per-source bound
(bothost.events.bounds): its bookkeeping per batch and the partial index of pending events
by source that its counts read (docs/events.md, "Figures").

Then a tick's claim with 100,000 low events held for a later briefing and 100 new ones,
wall time on the store thread, best of three: its two reads of pending events as main had
them before events:3 (no ``events_claim`` index: a sort of every pending row for the fresh
events, a walk of every pending row for the retries) and as they are now, for a tick's
whole batch (``MAX_EVENTS_PER_TICK``) and for the first 100; and the whole ``ledger.claim``
now.

Run: .venv/bin/python bench/queue_cpu.py
"""

from __future__ import annotations

import asyncio
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bothost.config import TickConfig
from bothost.crosshost import lease
from bothost.events import events_migrations, ledger
from bothost.events.queue import EventQueue
from bothost.events.tick import MAX_EVENTS_PER_TICK
from bothost.models import Event
from bothost.store import Store, core_migrations
from bothost.store.conn import Conn

ROUNDS = 3
HELD = 100_000  # low events held for a later briefing (quiet hours, a digest)


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def per_event(batch: int, batches: int) -> float:
    """Microseconds of CPU per event for ``batches`` batches of ``batch`` events."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "b.db", [*core_migrations(), *events_migrations()])
        queue = EventQueue(store, TickConfig())
        await queue.ingest([Event("warm", "event/n", {"id": "w"})])  # open, prepare
        n, start = 0, cpu()
        for _ in range(batches):
            await queue.ingest(
                [Event(f"s{i % 4}", "event/n", {"id": str(n + i)}) for i in range(batch)]
            )
            n += batch
        used = cpu() - start
        await queue.close()
        store.close()
    return used / n * 1e6


def hold(db: Conn) -> None:
    """``HELD`` held low events, then 100 new ones."""
    row = "('ops', 'alert', '{}', ?, ?, 'pending', ?)"
    with db.transaction() as conn:
        conn.executemany(
            "INSERT INTO events (source, type, payload, received_at, dedupe_key, status,"
            f" priority) VALUES {row}",
            [(n, f"k{n}", "low" if n < HELD else None) for n in range(HELD + 100)],
        )


# the claim's two reads as they were before events:3 (bothost.events.ledger at 463cfcc)
BEFORE_FRESH = (
    "SELECT id, source, type, payload, received_at, attempts FROM events"
    f" WHERE status = 'pending' AND {ledger.UNNAMED}"
    " ORDER BY CASE WHEN priority = 'low' THEN 1 ELSE 0 END, id LIMIT ?"
)
BEFORE_RETRIES = (
    "SELECT e.id, e.briefing_id FROM events e JOIN briefings b ON b.id = e.briefing_id"
    " WHERE e.status = 'pending' AND b.status = 'pending' ORDER BY e.id"
)


def best_ms(store: Store, job: Callable[[Conn], object]) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        store.call(job)
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def claim_figures(limit: int) -> tuple[float, float, float]:
    """Milliseconds of the claim's reads of up to ``limit`` events before and after, and of
    the whole ``ledger.claim`` after."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "b.db", [*core_migrations(), *events_migrations()])
        store.call(hold)
        owner = lease.new_owner()
        store.call(lambda db: lease.acquire(db, lease.TICK_LOCK, owner, time.time(), 3600))
        after = best_ms(
            store,
            lambda db: (
                db.execute(ledger.fresh(db.dialect), (limit,)).fetchall(),
                db.execute(ledger.RETRIES).fetchall(),
            ),
        )
        whole = best_ms(store, lambda db: ledger.claim(db, time.time(), limit, owner))
        store.call(lambda db: db.execute("DROP INDEX events_claim"))
        before = best_ms(
            store,
            lambda db: (
                db.execute(BEFORE_FRESH, (limit,)).fetchall(),
                db.execute(BEFORE_RETRIES).fetchall(),
            ),
        )
        store.close()
    return before, after, whole


async def main() -> None:
    big = min([await per_event(5000, 20) for _ in range(ROUNDS)])
    one = min([await per_event(1, 3000) for _ in range(ROUNDS)])
    print(f"batches of 5,000 events:  {big:6.1f} us of CPU per event (best of {ROUNDS})")
    print(f"one event per batch:      {one:6.1f} us of CPU per event (best of {ROUNDS})")
    print(f"tick claim with {HELD:,} held low events (ms of wall time, best of {ROUNDS}):")
    print("                  reads before   reads after   whole claim after")
    for limit in (MAX_EVENTS_PER_TICK, 100):
        before, after, whole = claim_figures(limit)
        print(f"  first {limit:>6,}:  {before:10.1f}   {after:11.1f}   {whole:17.1f}")


if __name__ == "__main__":
    asyncio.run(main())
