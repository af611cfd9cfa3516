"""CPU per event of the event queue alone: ``EventQueue.ingest`` into SQLite.

The process's CPU (both threads: the event loop preparing rows, the store thread writing
them), so a machine shared with other work moves it less than a wall-clock rate: batches
of 5,000 events of four sources (an MCP server's backlog, a burst), and one event per batch
(a webhook at a time). Best of three runs each. Used to price the per-source bound
(bothost.events.bounds): its bookkeeping per batch and the partial index of pending events
by source that its counts read (docs/events.md, "Figures").

Run: .venv/bin/python bench/queue_cpu.py
"""

from __future__ import annotations

import asyncio
import resource
import tempfile
from pathlib import Path

from bothost.config import TickConfig
from bothost.events import events_migrations
from bothost.events.queue import EventQueue
from bothost.models import Event
from bothost.store import Store, core_migrations

ROUNDS = 3


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


async def main() -> None:
    big = min([await per_event(5000, 20) for _ in range(ROUNDS)])
    one = min([await per_event(1, 3000) for _ in range(ROUNDS)])
    print(f"batches of 5,000 events:  {big:6.1f} us of CPU per event (best of {ROUNDS})")
    print(f"one event per batch:      {one:6.1f} us of CPU per event (best of {ROUNDS})")


if __name__ == "__main__":
    asyncio.run(main())
