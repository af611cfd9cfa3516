"""One event that cannot be stored fails alone; the rest of its group commit is kept.

The queue writes a burst of events in one transaction. Before per-row isolation, a lone
surrogate in one event's ``type`` raised inside that transaction and rolled back every
event beside it (in one run 6,000 of a well-behaved server's 10,000 events were lost, and
MCP events are not retried). These tests mix good rows with rows that cannot be stored —
for each way a row can fail — and check that exactly the bad ones are refused, each with
its own error and one log line naming it, in the same transaction as the good ones.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import sys

import pytest

from bothost.config import TickConfig
from bothost.events import events_migrations
from bothost.events.queue import EventQueue, EventRejectedError
from bothost.models import Event
from bothost.store import Store, core_migrations
from tests.helpers import ingest_all, ingest_one, make_host, until

SURROGATE = "\ud800"
LENGTH_LIMIT = 10_000  # bytes per value, set on the test's connection to make "too big" cheap


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "bothost.db", [*core_migrations(), *events_migrations()])
    yield s
    s.close()


@pytest.fixture
async def queue(store):
    q = EventQueue(store, TickConfig())
    yield q
    await q.close()


def good(n: int) -> Event:
    return Event("good", "event/new_email", {"id": f"m{n}", "summary": f"mail {n}"})


def circular() -> dict:
    payload: dict = {"id": "loop"}
    payload["self"] = payload
    return payload


def deep(levels: int) -> dict:
    payload: dict = {"id": "deep"}
    for _ in range(levels):
        payload = {"inner": payload}
    return payload


BAD = {
    "surrogate in type": Event("bad", f"event/{SURROGATE}", {"id": "x"}),
    "surrogate in source": Event(f"bad{SURROGATE}", "event/x", {"id": "x"}),
    "surrogate in dedupe key": Event("bad", "webhook", {"n": 1}, dedupe_key=f"msg_{SURROGATE}"),
    "surrogate in payload": Event("bad", "event/x", {"id": "x", "text": SURROGATE}),
    "payload not JSON-encodable": Event("bad", "event/x", circular()),
    "payload nested too deep": Event("bad", "event/x", deep(sys.getrecursionlimit() + 100)),
    "type too big for SQLite": Event("bad", "event/" + "t" * LENGTH_LIMIT, {"id": "x"}),
    "NULL source": Event(None, "event/x", {"id": "x"}),  # type: ignore[arg-type]
}


def stored(store, where: str = "1") -> int:
    return store.call(
        lambda db: db.execute(f"SELECT count(*) FROM events WHERE {where}").fetchone()[0]
    )


@pytest.mark.parametrize("case", list(BAD))
async def test_a_bad_row_fails_alone_and_its_neighbours_commit(store, queue, caplog, case):
    store.call(lambda db: db.raw.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, LENGTH_LIMIT))
    transactions = []
    original = store.submit

    def counting_submit(fn):  # the store thread's jobs (``run`` submits one too)
        transactions.append(fn)
        return original(fn)

    store.submit = counting_submit
    events = [good(n) for n in range(300)]
    events.insert(150, BAD[case])
    with caplog.at_level(logging.WARNING, logger="bothost.events.queue"):
        results = await asyncio.gather(
            *(ingest_one(queue, e) for e in events), return_exceptions=True
        )
    jobs = len(transactions)  # the checks below are jobs too
    bad = results.pop(150)
    assert isinstance(bad, EventRejectedError), bad
    assert all(isinstance(r, int) for r in results), [r for r in results if not isinstance(r, int)]
    assert stored(store) == 300 and stored(store, "source = 'good'") == 300
    assert jobs <= 2  # still one group commit, not a transaction per row
    refusals = [r for r in caplog.records if "cannot be stored" in r.getMessage()]
    assert len(refusals) == 1, [r.getMessage() for r in caplog.records]
    assert "'bad" in refusals[0].getMessage() or case == "NULL source"


async def test_a_rejected_event_is_named_in_its_error(queue):
    with pytest.raises(EventRejectedError) as raised:
        await ingest_one(queue, BAD["surrogate in type"])
    assert "'event/\\ud800'" in str(raised.value) and "'bad'" in str(raised.value)
    assert await ingest_one(queue, good(1)) is not None  # the writer lives on


async def test_ingest_many_returns_every_good_id_around_a_bad_one(queue, store):
    events = [good(1), BAD["surrogate in payload"], good(2), BAD["surrogate in type"], good(3)]
    with pytest.raises(EventRejectedError):
        await ingest_all(queue, events)
    assert stored(store) == 3


async def test_a_store_wide_failure_still_fails_the_whole_batch(queue, store):
    """A full disk or a lost lock is not one row's fault: no row is half-committed."""
    store.call(
        lambda db: db.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON events"
            " WHEN NEW.source = 'disk' BEGIN"
            " SELECT RAISE(ROLLBACK, 'disk I/O error'); END"
        )
    )
    events = [good(1), Event("disk", "event/x", {"id": "1"}), good(2)]
    results = await asyncio.gather(*(ingest_one(queue, e) for e in events), return_exceptions=True)
    assert all(isinstance(r, sqlite3.DatabaseError) for r in results), results
    assert stored(store) == 0
    assert await ingest_one(queue, good(3)) is not None


# --- end to end: MCP servers pushing events through the host's queue ----------------------

RAW_SERVER = r"""
import json, sys

name, count, bad_every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
out = sys.stdout

def send(text):
    out.write(text + "\n")
    out.flush()

for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send(json.dumps({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": name, "version": "1"}}}))
    elif method == "tools/list":
        send(json.dumps({"jsonrpc": "2.0", "id": mid, "result": {"tools": []}}))
    elif method == "notifications/initialized":
        for n in range(count):
            kind = "new_email"
            if bad_every and n % bad_every == bad_every // 2:
                kind = "\\ud800"  # a JSON escape: a lone surrogate once decoded
            send('{"jsonrpc": "2.0", "method": "event/%s", "params": {"id": "%s-%d",'
                 ' "summary": "event %d"}}' % (kind, name, n, n))
        send('{"jsonrpc": "2.0", "method": "event/done", "params": {"id": "done"}}')
    elif mid is not None:
        send(json.dumps({"jsonrpc": "2.0", "id": mid, "result": {}}))
"""
EVENTS_PER_SERVER = 3000
BAD_EVERY = 500  # the bad server's every 500th event has a lone surrogate in its type


async def test_a_bad_mcp_event_does_not_take_a_good_servers_events_with_it(home, tmp_path):
    script = tmp_path / "raw_server.py"
    script.write_text(RAW_SERVER)

    def server(name: str, bad_every: int) -> dict:
        return {
            "command": sys.executable,
            "args": [str(script), name, str(EVENTS_PER_SERVER), str(bad_every)],
        }

    host = make_host(
        home,
        {"mcp": {"servers": {"well": server("well", 0), "hostile": server("hostile", BAD_EVERY)}}},
    )
    await host.start(serve_http=False, platforms=False, tick=False)
    try:

        def done() -> int:
            return host.store.call(
                lambda db: db.execute(
                    "SELECT count(*) FROM events WHERE type = 'event/done'"
                ).fetchone()[0]
            )

        # each server's events are queued in order, so its marker comes after all of them
        await until(lambda: done() == 2, timeout=60)
        counts = dict(
            host.store.call(
                lambda db: db.execute(
                    "SELECT source, count(*) FROM events WHERE type = 'event/new_email'"
                    " GROUP BY source"
                ).fetchall()
            )
        )
    finally:
        await host.stop()
    assert counts == {
        "well": EVENTS_PER_SERVER,
        "hostile": EVENTS_PER_SERVER - EVENTS_PER_SERVER // BAD_EVERY,
    }


async def test_ids_stay_each_events_own_when_a_trigger_adds_rows(queue, store):
    """Rows a trigger adds beside a burst's own must not shift the ids its callers get."""
    store.call(
        lambda db: db.execute(
            "CREATE TRIGGER echo AFTER INSERT ON events WHEN NEW.source = 'echoed' BEGIN"
            " INSERT INTO events (source, type, payload, received_at, dedupe_key, status,"
            " attempts) VALUES ('echo', 'event/echo', '{}', NEW.received_at, 'echo', 'pending',"
            " 0); END"
        )
    )
    events = [good(n) for n in range(20)]
    events.insert(7, Event("echoed", "event/x", {"id": "e"}))
    ids = await ingest_all(queue, events)
    sources = store.call(
        lambda db: [db.value("SELECT source FROM events WHERE id = ?", [i]) for i in ids]
    )
    assert sources == [e.source for e in events]
    assert stored(store) == 22
