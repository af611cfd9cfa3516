"""Acknowledge, snooze and mute: what the platforms' buttons do, each idempotent."""

from __future__ import annotations

import pytest

from bothost.config import TickRule
from bothost.events import feedback
from bothost.events.tick import Ticker, run_tick
from bothost.events.triage import MatchError
from bothost.models import Event
from tests.conftest import both_backends
from tests.helpers import ingest_all, ingest_one

pytestmark = both_backends

T0 = 1_800_000_000.0


def at(t):
    return lambda: t


def status_of(store, event_id):
    return store.call(
        lambda db: db.execute("SELECT status FROM events WHERE id = ?", (event_id,)).fetchone()[0]
    )


async def test_a_mute_hides_matching_events_and_counts_them(queue, store, config, recorder):
    mute_id = await feedback.mute(store, "gmail", None, {"payload.label": "promotions"})
    assert await feedback.mute(store, "gmail", None, {"payload.label": "promotions"}) == mute_id
    await ingest_all(
        queue,
        [
            Event(
                "gmail",
                "event/new_email",
                {"id": f"p{n}", "label": "promotions", "summary": f"Sale {n}"},
            )
            for n in range(4)
        ]
        + [Event("weather", "event/weather_alert", {"id": "w", "summary": "Rain from 17:00"})],
    )
    await run_tick(store, config, recorder, clock=at(T0))
    text = recorder.sent[0][1].text
    assert "Sale" not in text and "Rain from 17:00" in text
    assert text.endswith("Muted: 4 new emails (gmail).")
    assert text.splitlines()[0].endswith("· 5 events")


async def test_only_muted_events_post_nothing(queue, store, config, recorder):
    await feedback.mute(store, type="event/new_email")
    await ingest_one(queue, Event("gmail", "event/new_email", {"id": "m"}))
    result = await run_tick(store, config, recorder)
    assert result.briefings == [] and result.silenced == 1


async def test_a_mute_with_an_end_stops_applying(queue, store, config, recorder):
    await feedback.mute(store, "gmail", until=T0 + 60)
    await ingest_one(queue, Event("gmail", "event/new_email", {"id": "m", "summary": "hello"}))
    await run_tick(store, config, recorder, clock=at(T0 + 61))
    assert "hello" in recorder.sent[0][1].text


async def test_a_snoozed_event_comes_back_at_the_first_tick_after_its_time(
    queue, store, config, recorder
):
    event_id = await ingest_one(
        queue, Event("ssh", "event/ssh_alert", {"id": "a", "summary": "disk 95%"})
    )
    await run_tick(store, config, recorder, clock=at(T0))
    assert status_of(store, event_id) == "done"

    assert await feedback.snooze(store, [event_id], T0 + 3600) == 1
    assert await feedback.snooze(store, [event_id], T0 + 3600) == 1  # pressed twice: same
    assert (await run_tick(store, config, recorder, clock=at(T0 + 1800))).briefings == []
    assert status_of(store, event_id) == "snoozed"

    back = await run_tick(store, config, recorder, clock=at(T0 + 3601))
    assert len(back.briefings) == 1 and "disk 95%" in back.briefings[0].text
    assert back.briefings[0].id != recorder.sent[0][1].id
    assert status_of(store, event_id) == "done"


async def test_acknowledged_events_never_reach_a_briefing(queue, store, config, recorder):
    keep = await ingest_one(
        queue, Event("gmail", "event/new_email", {"id": "1", "summary": "keep"})
    )
    gone = await ingest_one(
        queue, Event("gmail", "event/new_email", {"id": "2", "summary": "gone"})
    )
    assert await feedback.acknowledge(store, [gone]) == 1
    assert await feedback.acknowledge(store, [gone]) == 0  # already done
    await run_tick(store, config, recorder)
    text = recorder.sent[0][1].text
    assert "keep" in text and "gone" not in text
    assert status_of(store, keep) == status_of(store, gone) == "done"


async def test_acknowledging_during_a_failed_delivery_sticks(queue, store, config, recorder):
    config.deliver_to = ["slack:C1"]
    recorder.failing = {"slack:C1"}
    event_id = await ingest_one(queue, Event("gmail", "event/new_email", {"id": "1"}))
    await run_tick(store, config, recorder)
    assert status_of(store, event_id) == "pending"
    await feedback.acknowledge(store, [event_id])
    again = await run_tick(store, config, recorder)
    assert status_of(store, event_id) == "done" and again.briefings == []
    listed = store.call(lambda db: feedback.list_briefings(db))
    assert listed[0]["status"] == "cancelled"
    assert listed[0]["deliveries"][0]["status"] == "cancelled"


async def test_match_keys_that_can_never_match_are_refused(store, config, recorder):
    with pytest.raises(MatchError, match=r"mute: unknown match key 'from'.*payload\.from"):
        await feedback.mute(store, "gmail", match={"from": "*@spam"})
    config.rules = [TickRule({"payload.from": "*"}), TickRule({"sender": "*"})]
    with pytest.raises(MatchError, match=r"tick.rules\[1\].match"):
        Ticker(store, config, recorder)
