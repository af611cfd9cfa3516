"""A tick killed with SIGKILL loses nothing: the next tick delivers what it held.

The child process claims the events, records its briefing and then dies in the middle of
delivering it — either before the target accepted it, or after the target accepted it but
before the delivery was recorded. The parent waits for that point through a file the
child writes, kills it, and runs the next tick with a clock past the lease.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bothost.config import TickConfig
from bothost.events.tick import run_tick
from bothost.models import Event
from tests.helpers import ingest_all

CHILD = r"""
import asyncio, json, sys
from pathlib import Path
from bothost.config import TickConfig
from bothost.events import events_migrations
from bothost.events.tick import run_tick
from bothost.store import Store, core_migrations

db, work, accept_first = sys.argv[1], Path(sys.argv[2]), sys.argv[3] == "accept"

async def deliver(target, briefing):
    if accept_first:  # the platform took it; we die before recording that
        with open(work / "accepted.jsonl", "a") as fh:
            fh.write(json.dumps({"target": target, "events": briefing.event_ids}) + "\n")
    (work / "delivering").write_text(str(briefing.id))
    await asyncio.Event().wait()  # killed here

async def main():
    store = Store(db, [*core_migrations(), *events_migrations()])
    await run_tick(store, TickConfig(deliver_to=["slack:C1"], lease=300), deliver)

asyncio.run(main())
"""


def wait_for(path: Path, proc: subprocess.Popen, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while not path.exists():
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "child died"
        assert time.monotonic() < deadline, f"child never reached {path.name}"
        time.sleep(0.02)


def run_child_until_killed(db: Path, work: Path, mode: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(db), str(work), mode],
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONWARNINGS": ""},
    )
    try:
        wait_for(work / "delivering", proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL


def delivered_briefings(store) -> list[tuple[int, list[int]]]:
    rows = store.call(
        lambda db: db.execute(
            "SELECT b.id, b.structure FROM briefings b JOIN deliveries d ON d.briefing_id = b.id"
            " WHERE d.status = 'delivered' ORDER BY b.id"
        ).fetchall()
    )
    return [(bid, json.loads(structure)["event_ids"]) for bid, structure in rows]


@pytest.mark.parametrize("mode", ["before-accept", "accept"])
async def test_a_killed_tick_loses_no_event(store, queue, recorder, tmp_path, mode):
    ids = await ingest_all(
        queue,
        [
            Event("gmail", "event/new_email", {"id": f"m{n}", "summary": f"mail {n}"})
            for n in range(50)
        ],
    )
    work = tmp_path / "work"
    work.mkdir()

    run_child_until_killed(store.path, work, mode)

    pending = store.call(
        lambda db: db.execute("SELECT count(*) FROM events WHERE status = 'pending'").fetchone()[0]
    )
    assert pending == 50  # the dead tick's lease was its claim: nothing to give back
    config = TickConfig(deliver_to=["slack:C1"], lease=300)
    early = await run_tick(store, config, recorder)
    assert early.status == "busy"  # the dead tick's lease has not run out yet

    later = time.time() + config.lease + 1
    result = await run_tick(store, config, recorder, clock=lambda: later)

    assert result.status == "ok" and len(result.briefings) == 1
    delivered = delivered_briefings(store)
    assert [sorted(events) for _, events in delivered] == [sorted(ids)]
    statuses = store.call(lambda db: db.execute("SELECT DISTINCT status FROM events").fetchall())
    assert statuses == [("done",)]
    accepted = work / "accepted.jsonl"
    if mode == "accept":
        # the platform got it once before the crash: the re-send is the same briefing,
        # because that first delivery was never recorded
        first = [json.loads(line) for line in accepted.read_text().splitlines()]
        assert sorted(first[0]["events"]) == sorted(ids)
        assert result.briefings[0].id == delivered[0][0]
    else:
        assert not accepted.exists()
    assert (await run_tick(store, config, recorder, clock=lambda: later + 1)).briefings == []
