"""The tick: grouping at scale, retries and failures, quiet hours, the lease, silence."""

from __future__ import annotations

import asyncio
import json
import math
import time
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from bothost.config import TickRule
from bothost.crosshost import lease
from bothost.events import feedback
from bothost.events.tick import run_tick
from bothost.models import Event
from tests.conftest import both_backends
from tests.helpers import age_lease, ingest_all, ingest_one

pytestmark = both_backends

ZURICH = ZoneInfo("Europe/Zurich")
MORNING = datetime(2026, 12, 2, 8, 0, tzinfo=ZURICH).timestamp()  # a Wednesday


def at(t):
    return lambda: t


def statuses(store):
    return store.call(
        lambda db: dict(
            db.execute("SELECT status, count(*) FROM events GROUP BY status").fetchall()
        )
    )


async def test_ten_thousand_events_become_one_grouped_briefing(queue, store, config, recorder):
    config.rules = [
        TickRule({"source": "gmail", "payload.from": "*@corp.com"}, "high"),
        TickRule({"source": "news"}, "low"),
        TickRule({"type": "event/spam"}, "drop"),
    ]
    events = []
    for n in range(10_000):
        kind = n % 4
        if kind == 0:
            events.append(
                Event(
                    "gmail",
                    "event/new_email",
                    {"id": f"m{n}", "from": f"user{n % 3}@corp.com", "summary": f"mail {n}"},
                )
            )
        elif kind == 1:
            events.append(
                Event(
                    "ssh",
                    "event/ssh_alert",
                    {"id": f"a{n}", "host": f"db-{n % 5}", "summary": "disk"},
                )
            )
        elif kind == 2:
            events.append(Event("news", "event/item", {"id": f"n{n}"}))
        else:
            events.append(Event("x", "event/spam", {"id": f"s{n}"}))
    ids = await ingest_all(queue, events)
    assert None not in ids

    result = await run_tick(store, config, recorder, clock=at(MORNING))

    assert result.status == "ok" and result.events == 10_000
    assert [t for t, _ in recorder.sent] == ["console:", "web:briefings"]
    briefing = recorder.sent[0][1]
    assert briefing.text.splitlines()[0] == "Briefing · Wed 08:00 · 7500 events"
    assert "• 834 new emails from user0@corp.com — latest: mail 9996." in briefing.text
    fyi = briefing.text.split("FYI\n")[1].splitlines()[:5]
    assert sorted(fyi) == [f"• 500 ssh alerts on db-{n} — latest: disk." for n in range(5)]
    assert "+ 2500 low: 2500 items — `bothost events list --priority low`" in briefing.text
    assert "spam" not in briefing.text
    assert len(briefing.items) == 3 + 5
    assert statuses(store) == {"done": 10_000}


async def test_a_tick_with_nothing_above_drop_posts_nothing(queue, store, config, recorder):
    config.rules = [TickRule({"source": "noise"}, "drop")]
    await ingest_all(queue, [Event("noise", "event/x", {"id": i}) for i in range(5)])
    result = await run_tick(store, config, recorder)
    assert result.briefings == [] and recorder.sent == [] and result.silenced == 5
    assert statuses(store) == {"done": 5}
    assert store.call(lambda db: db.execute("SELECT count(*) FROM briefings").fetchone()[0]) == 0


async def test_a_failing_target_retries_then_marks_failed(queue, store, config, recorder):
    config.max_attempts = 3
    recorder.failing = {"web:briefings"}
    await ingest_one(
        queue, Event("weather", "event/weather_alert", {"id": "w1", "summary": "Rain"})
    )

    first = await run_tick(store, config, recorder, clock=at(MORNING))
    assert len(first.briefings) == 1 and len(recorder.sent) == 1  # console got it
    events = store.call(lambda db: feedback.list_events(db))
    assert events[0]["status"] == "pending" and events[0]["attempts"] == 1

    for n in (2, 3):
        again = await run_tick(store, config, recorder, clock=at(MORNING + n * 900))
        assert [b.id for b in again.briefings] == [first.briefings[0].id]  # the same briefing
    assert [t for t, _ in recorder.sent] == ["console:"]  # never a second copy to console
    events = store.call(lambda db: feedback.list_events(db))
    assert events[0]["status"] == "done"  # console has it: the briefing is partial
    listed = store.call(lambda db: feedback.list_briefings(db))
    assert listed[0]["status"] == "partial"
    web = [d for d in listed[0]["deliveries"] if d["target"] == "web:briefings"][0]
    assert web["status"] == "failed" and web["attempts"] == 3
    assert "web:briefings is down" in web["last_error"]


async def test_events_fail_when_no_target_takes_them_and_can_be_retried(
    queue, store, config, recorder
):
    config.max_attempts = 2
    config.deliver_to = ["slack:C1"]
    recorder.failing = {"slack:C1"}
    event_id = await ingest_one(queue, Event("ssh", "event/ssh_alert", {"id": "a", "summary": "x"}))
    for n in range(2):
        await run_tick(store, config, recorder, clock=at(MORNING + n))
    failed = store.call(lambda db: feedback.list_events(db, "failed"))
    assert [e["id"] for e in failed] == [event_id]
    assert failed[0]["attempts"] == 2 and "slack:C1 is down" in failed[0]["last_error"]
    assert (await run_tick(store, config, recorder, clock=at(MORNING + 5))).briefings == []

    assert await feedback.retry(store, [event_id]) == 1
    recorder.failing = set()
    result = await run_tick(store, config, recorder, clock=at(MORNING + 10))
    assert len(result.briefings) == 1 and recorder.sent[0][0] == "slack:C1"
    assert statuses(store) == {"done": 1}


async def test_quiet_hours_hold_everything_but_urgent(queue, store, config, recorder):
    config.quiet_hours = "22:00-07:00"
    config.rules = [
        TickRule({"type": "event/ssh_alert"}, "urgent"),
        TickRule({"source": "news"}, "low"),
    ]
    night = datetime(2026, 12, 2, 23, 30, tzinfo=ZURICH).timestamp()
    await ingest_all(
        queue,
        [
            Event("ssh", "event/ssh_alert", {"id": "a", "summary": "db-1 down"}),
            Event("gmail", "event/new_email", {"id": "m", "summary": "Lunch?"}),
            Event("news", "event/item", {"id": "n"}),
        ],
    )
    result = await run_tick(store, config, recorder, clock=at(night))
    text = recorder.sent[0][1].text
    assert "db-1 down" in text and "Lunch?" not in text and "Low" not in text
    assert result.held == 2 and statuses(store) == {"done": 1, "pending": 2}

    still_night = await run_tick(store, config, recorder, clock=at(night + 3600))
    assert still_night.briefings == [] and still_night.held == 2

    morning = datetime(2026, 12, 3, 7, 0, tzinfo=ZURICH).timestamp()
    await run_tick(store, config, recorder, clock=at(morning))
    text = recorder.sent[-1][1].text
    assert "Lunch?" in text and "+ 1 low: 1 item" in text and "db-1" not in text
    assert statuses(store) == {"done": 3}


async def test_a_held_lease_makes_a_second_tick_busy(queue, store, config, recorder):
    await ingest_one(queue, Event("gmail", "event/new_email", {"id": "m"}))
    assert store.call(lambda db: lease.acquire(db, lease.TICK_LOCK, "host:1", MORNING, 300))
    busy = await run_tick(store, config, recorder, clock=at(MORNING + 10))
    assert busy.status == "busy" and recorder.sent == []
    assert statuses(store) == {"pending": 1}
    age_lease(store, lease.TICK_LOCK, 301)
    expired = await run_tick(store, config, recorder, clock=at(MORNING + 301))
    assert expired.status == "ok" and len(recorder.sent) == 2
    assert store.call(lambda db: lease.holder(db, lease.TICK_LOCK, MORNING + 302)) is None


async def test_ticks_are_recorded(queue, store, config, recorder):
    await ingest_one(queue, Event("gmail", "event/new_email", {"id": "m"}))
    await run_tick(store, config, recorder, clock=at(MORNING), trigger="schedule")
    rows = store.call(
        lambda db: db.execute("SELECT trigger, status, events, briefings FROM ticks").fetchall()
    )
    assert rows == [("schedule", "ok", 1, 1)]


async def test_observers_see_the_briefing_before_delivery(queue, store, config, recorder):
    seen = []

    async def observe(briefing):
        seen.append((briefing.id, len(recorder.sent)))

    await ingest_one(queue, Event("gmail", "event/new_email", {"id": "m"}))
    result = await run_tick(store, config, recorder, on_briefing=observe)
    assert seen == [(result.briefings[0].id, 0)]


async def test_a_slow_tick_keeps_its_lease(queue, store, config):
    config.lease = 0.3
    gate = asyncio.Event()

    async def slow(target, briefing):
        await gate.wait()

    def lease_and_claim():  # the lease's expiry, and whether the briefing is recorded
        return store.call(
            lambda db: db.execute(
                "SELECT (SELECT expires_at FROM locks), (SELECT count(*) FROM briefings)"
            ).fetchone()
        )

    await ingest_one(queue, Event("gmail", "event/new_email", {"id": "m"}))
    first = asyncio.create_task(run_tick(store, config, slow))
    try:
        deadline = time.monotonic() + 5
        while (taken := lease_and_claim())[0] is None or not taken[1]:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        while lease_and_claim()[0] < taken[0] + 2 * config.lease:
            assert time.monotonic() < deadline, "the lease was not renewed"
            await asyncio.sleep(0.01)
        # the claim is the lease (its one row renewed): the event is not written meanwhile
        assert statuses(store) == {"pending": 1}
        assert (await run_tick(store, config, slow)).status == "busy"
    finally:
        gate.set()
        assert (await first).status == "ok"


@pytest.mark.parametrize(
    "occurred_at",
    [
        1e308,
        float("nan"),
        float("inf"),
        10**30,
        -(10**30),
        "0001-01-01T00:00:00+14:00",
        "9999-12-31T23:59:59-14:00",
    ],
)
async def test_an_event_with_an_impossible_time_does_not_stop_every_tick(
    queue, store, config, recorder, occurred_at
):
    await ingest_one(queue, Event("ssh", "event/ssh_alert", {"id": "a1", "summary": "good"}))
    odd = {"id": "a2", "summary": "odd time", "occurred_at": occurred_at}
    if isinstance(occurred_at, float) and not math.isfinite(occurred_at):
        # the queue refuses NaN and Infinity now (test_queue.py), but an older version
        # stored them as the text `NaN`/`Infinity`, which Python's json still reads back
        row = await ingest_one(queue, Event("ssh", "event/ssh_alert", {**odd, "occurred_at": 0}))
        legacy = json.dumps(odd)
        store.call(
            lambda db: db.execute("UPDATE events SET payload = ? WHERE id = ?", (legacy, row))
        )
    else:
        await ingest_one(queue, Event("ssh", "event/ssh_alert", odd))
    result = await run_tick(store, config, recorder, clock=at(MORNING))
    assert result.status == "ok" and statuses(store) == {"done": 2}
    assert sorted(recorder.sent[0][1].event_ids) == [1, 2]
