"""A tick writes each event row once: the lease is its claim (no ``claimed`` round trip),
and a shown event's priority, briefing and outcome go in the one write that settles it.

On PostgreSQL every UPDATE of a row is a new row version (and, when an indexed column such
as ``status`` changes, new index entries), so a trigger counting the UPDATEs of each event
row is what this holds, on both backends. A tick that dies between recording its briefing
and settling it leaves that briefing's events unnamed: the next tick must still retry the
same briefing, not triage them afresh into a second, different one.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC

from bothost.config import TickRule
from bothost.crosshost import lease
from bothost.events import ledger
from bothost.events.render import build_briefing
from bothost.events.tick import run_tick
from bothost.events.triage import Rulebook, triage_offline
from bothost.models import Event
from tests.conftest import both_backends
from tests.helpers import age_lease, ingest_all

pytestmark = both_backends

SQLITE_COUNTER = """
CREATE TABLE event_writes (event_id INTEGER);
CREATE TRIGGER event_written AFTER UPDATE ON events
BEGIN INSERT INTO event_writes (event_id) VALUES (new.id); END
"""
POSTGRES_COUNTER = [
    "CREATE TABLE event_writes (event_id BIGINT)",
    "CREATE FUNCTION event_written() RETURNS trigger LANGUAGE plpgsql AS"
    " 'BEGIN INSERT INTO event_writes (event_id) VALUES (NEW.id); RETURN NEW; END'",
    "CREATE TRIGGER event_written AFTER UPDATE ON events FOR EACH ROW"
    " EXECUTE FUNCTION event_written()",
]


def count_writes(store) -> None:
    def install(db) -> None:
        if db.dialect == "sqlite":
            db.raw.executescript(SQLITE_COUNTER)
        else:
            for statement in POSTGRES_COUNTER:
                db.execute(statement)

    store.call(install)


def writes(store) -> Counter[int]:
    """UPDATEs per event row since the last call."""

    def read(db) -> Counter[int]:
        with db.transaction() as conn:
            rows = conn.execute("SELECT event_id FROM event_writes").fetchall()
            conn.execute("DELETE FROM event_writes")
        return Counter(int(r[0]) for r in rows)

    return store.call(read)


def statuses(store) -> dict[str, int]:
    return store.call(
        lambda db: dict(db.execute("SELECT status, count(*) FROM events GROUP BY status"))
    )


async def ingest_four(queue) -> list[int]:
    return await ingest_all(
        queue,
        [
            Event("gmail", "event/new_email", {"id": "m1", "summary": "lunch?"}),
            Event("gmail", "event/new_email", {"id": "m2", "summary": "invoice"}),
            Event("news", "event/item", {"id": "n1", "summary": "headline"}),  # low
            Event("spam", "event/item", {"id": "s1", "summary": "offer"}),  # dropped
        ],
    )


async def test_a_tick_writes_each_event_row_once(store, queue, config, recorder):
    config.rules = [TickRule({"source": "news"}, "low"), TickRule({"source": "spam"}, "drop")]
    count_writes(store)
    ids = await ingest_four(queue)
    writes(store)  # what ingestion did is not the tick's
    result = await run_tick(store, config, recorder)
    assert result.status == "ok" and len(recorder.sent) == 2
    assert writes(store) == Counter(ids)  # every row once: shown, low and dropped alike
    assert statuses(store) == {"done": 4}
    named = store.call(
        lambda db: db.execute("SELECT priority, briefing_id FROM events ORDER BY id").fetchall()
    )
    bid = result.briefings[0].id
    assert [tuple(r) for r in named] == [
        ("normal", bid),
        ("normal", bid),
        ("low", bid),
        ("drop", None),
    ]


async def test_a_failed_delivery_and_its_retry_write_each_event_once_per_tick(
    store, queue, config, recorder
):
    count_writes(store)
    ids = await ingest_four(queue)
    writes(store)
    recorder.failing.add("web:briefings")
    first = await run_tick(store, config, recorder)
    assert writes(store) == Counter(ids)
    assert statuses(store) == {"pending": 4}  # named by the briefing, attempts + 1
    recorder.failing.clear()
    second = await run_tick(store, config, recorder)
    assert second.briefings[0].id == first.briefings[0].id  # the same briefing, retried
    assert writes(store) == Counter(ids)
    assert statuses(store) == {"done": 4}
    assert [target for target, _ in recorder.sent] == ["console:", "web:briefings"]


async def test_a_briefing_recorded_by_a_tick_that_died_is_retried_not_triaged_again(
    store, queue, config, recorder
):
    ids = await ingest_four(queue)
    owner = "h:1:dead"
    t0 = 1_800_000_000.0

    def tick_until_recorded(db) -> int:  # a tick's steps up to "recorded", then SIGKILL
        assert lease.acquire(db, lease.TICK_LOCK, owner, t0, config.lease)
        tick_id = ledger.start_tick(db, "manual", t0, owner)
        claim = ledger.claim(db, t0, 100, owner)
        triage = triage_offline(claim.fresh, Rulebook(), [], UTC)
        briefing = build_briefing(
            triage.items,
            low_ids=[],
            muted_ids=[],
            muted_summary="",
            targets=config.deliver_to,
            now=t0,
            tz=UTC,
        )
        ledger.record(
            db,
            tick_id=tick_id,
            priorities=triage.priorities,
            done=[],
            briefing=briefing,
            now=t0,
            owner=owner,
        )
        # one target was sent to and recorded before the kill
        delivery = ledger.outstanding(db, briefing.id)[0][0]
        ledger.record_delivery(db, delivery, None, "ref", t0, config.max_attempts)
        return briefing.id

    bid = store.call(tick_until_recorded)
    # the dead holder's row runs out (its advisory lock went with it on PostgreSQL)
    age_lease(store, lease.TICK_LOCK, config.lease + 1)
    result = await run_tick(store, config, recorder, clock=lambda: t0 + config.lease + 1)
    assert result.status == "ok"
    assert [b.id for b in result.briefings] == [bid]  # the same briefing, not a new one
    assert [target for target, _ in recorder.sent] == ["web:briefings"]  # the one not sent
    assert statuses(store) == {"done": 4}
    structure = store.call(lambda db: db.value("SELECT structure FROM briefings"))
    assert sorted(json.loads(structure)["event_ids"]) == sorted(ids)
    assert store.call(lambda db: db.value("SELECT count(*) FROM briefings")) == 1
