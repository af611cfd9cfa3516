"""A process killed while it ingests loses no event it had acknowledged.

An event is acknowledged (``ingest`` returns its row id) only once its batch is committed.
The child keeps bursts of events flowing through the queue from two producers and writes
every acknowledged id to a file as soon as it has it; the parent SIGKILLs it mid-stream
and finds every one of those rows in the store, with the event it was acknowledged for.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from bothost.events import events_migrations
from bothost.store import Store, core_migrations

CHILD = r"""
import asyncio, json, sys
from bothost.config import TickConfig
from bothost.events import events_migrations
from bothost.events.queue import EventQueue
from bothost.models import Event
from bothost.store import Store, core_migrations

db, acks = sys.argv[1], open(sys.argv[2], "a", buffering=1)

async def producer(queue, name):
    n = 0
    while True:
        events = [Event("kill", "event/x", {"id": f"{name}{n + i}"}) for i in range(300)]
        n += 300
        ids = await queue.ingest(events)  # every one a row id: no event here is refused
        for event, row_id in zip(events, ids):
            acks.write(json.dumps([event.payload["id"], row_id]) + "\n")

async def main():
    store = Store(db, [*core_migrations(), *events_migrations()])
    queue = EventQueue(store, TickConfig())
    await asyncio.gather(producer(queue, "a"), producer(queue, "b"))

asyncio.run(main())
"""
ACKED_BEFORE_KILL = 1200  # a few batches each, so the kill lands between or inside them
BOUND = 60.0  # seconds for the child to start and acknowledge that many


def acknowledged(path: Path) -> list[tuple[str, int]]:
    if not path.exists():
        return []
    lines = path.read_text().splitlines()
    return [tuple(json.loads(line)) for line in lines if line.endswith("]")]


def test_a_killed_ingesting_process_loses_no_acknowledged_event(tmp_path):
    db, acks = tmp_path / "bothost.db", tmp_path / "acks.jsonl"
    Store(db, [*core_migrations(), *events_migrations()]).close()  # migrated before the clock
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(db), str(acks)],
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONWARNINGS": ""},
    )
    try:
        deadline = time.monotonic() + BOUND
        while len(acknowledged(acks)) < ACKED_BEFORE_KILL:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "died"
            assert time.monotonic() < deadline, "the child acknowledged too few events"
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        proc.stderr.close()
    acked = acknowledged(acks)
    store = Store(db, [*core_migrations(), *events_migrations()])
    try:
        rows = dict(
            store.call(lambda conn: conn.execute("SELECT id, payload FROM events").fetchall())
        )
    finally:
        store.close()
    assert len(acked) >= ACKED_BEFORE_KILL
    missing = [(key, row_id) for key, row_id in acked if row_id not in rows]
    assert not missing, missing[:5]
    assert all(json.loads(rows[row_id])["id"] == key for key, row_id in acked)
