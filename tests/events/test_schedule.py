"""The timetable: cron in the configured zone, quiet hours, and the running Ticker."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from bothost.config import TickConfig, TickRule
from bothost.crosshost import lease
from bothost.events import triage_store
from bothost.events.schedule import QuietHours, Schedule, ScheduleError
from bothost.events.tick import Ticker
from bothost.models import Event
from tests.helpers import ingest_one

ZURICH = ZoneInfo("Europe/Zurich")


def zurich(*args):
    return datetime(*args, tzinfo=ZURICH).timestamp()


def test_a_weekday_cron_fires_at_local_time_across_dst():
    schedule = Schedule(TickConfig(schedules=["0 8 * * 1-5"], timezone="Europe/Zurich"))
    friday_evening = zurich(2026, 3, 27, 18, 0)
    monday = schedule.next_cron(friday_evening)
    assert datetime.fromtimestamp(monday, ZURICH) == datetime(2026, 3, 30, 8, 0, tzinfo=ZURICH)
    assert monday - friday_evening == (2 * 24 + 14) * 3600 - 3600  # clocks went forward


def test_a_daily_cron_fires_once_on_the_night_clocks_go_back():
    # Europe/Berlin repeats 02:00-03:00 on 2026-10-25: "every day at 02:30" is one
    # briefing, not one at 02:30 CEST and another an hour later at 02:30 CET (found from
    # outside: the tick posted the night's briefing twice).
    berlin = ZoneInfo("Europe/Berlin")
    schedule = Schedule(TickConfig(schedules=["30 2 * * *"], timezone="Europe/Berlin"))
    first = schedule.next_cron(datetime(2026, 10, 24, 12, 0, tzinfo=berlin).timestamp())
    assert datetime.fromtimestamp(first, berlin).utcoffset().total_seconds() == 7200
    second = schedule.next_cron(first)
    assert datetime.fromtimestamp(second, berlin) == datetime(2026, 10, 26, 2, 30, tzinfo=berlin)


def test_an_hourly_cron_keeps_both_hours_of_the_night_clocks_go_back():
    berlin = ZoneInfo("Europe/Berlin")
    schedule = Schedule(TickConfig(schedules=["0 * * * *"], timezone="Europe/Berlin"))
    moment = datetime(2026, 10, 25, 1, 30, tzinfo=berlin).timestamp()
    seen = []
    for _ in range(3):
        moment = schedule.next_cron(moment)
        seen.append(moment)
    assert [b - a for a, b in zip(seen, seen[1:], strict=False)] == [3600, 3600]


def test_the_next_due_tick_is_the_earlier_of_interval_and_cron():
    schedule = Schedule(TickConfig(interval=900, schedules=["0 8 * * *"], timezone="Europe/Zurich"))
    now = zurich(2026, 12, 2, 7, 55)
    assert schedule.next_due(now, last_tick=now - 60, cron_after=now) == (
        zurich(2026, 12, 2, 8, 0),
        "schedule",
    )
    assert schedule.next_due(now, last_tick=now - 800, cron_after=now) == (now + 100, "interval")


def test_quiet_hours_wrap_past_midnight():
    quiet = QuietHours.parse("22:00-07:00")
    assert quiet.contains(datetime(2026, 1, 1, 23, 0))
    assert quiet.contains(datetime(2026, 1, 1, 6, 59))
    assert not quiet.contains(datetime(2026, 1, 1, 7, 0))
    assert not quiet.contains(datetime(2026, 1, 1, 12, 0))
    assert QuietHours.parse("") is None


def test_quiet_all_day_is_written_00_00_to_24_00():
    quiet = QuietHours.parse("00:00-24:00")
    assert quiet is not None
    for hour, minute in ((0, 0), (12, 0), (23, 59)):
        assert quiet.contains(datetime(2026, 1, 1, hour, minute))
    assert quiet.contains(datetime(2026, 1, 1, 23, 59, 59, 999999))  # the last minute too


def test_24_00_ends_a_range_at_midnight():
    quiet = QuietHours.parse("22:00-24:00")
    assert quiet is not None
    assert quiet.contains(datetime(2026, 1, 1, 23, 59)) and quiet.contains(datetime(2026, 1, 1, 22))
    assert not quiet.contains(datetime(2026, 1, 1, 0, 0))
    assert not quiet.contains(datetime(2026, 1, 1, 21, 59))


@pytest.mark.parametrize("text", ["24:00-07:00", "00:00-24:01", "22:00-25:00"])
def test_24_00_is_only_an_end(text):
    with pytest.raises(ScheduleError, match="not a time of day"):
        QuietHours.parse(text)


def test_an_empty_range_names_the_all_day_spelling():
    with pytest.raises(ScheduleError, match="'00:00-24:00'"):
        QuietHours.parse("07:00-07:00")


@pytest.mark.parametrize(
    "bad", [{"quiet_hours": "late"}, {"schedules": ["every day"]}, {"timezone": "Mars/Olympus"}]
)
def test_bad_timetables_fail_with_the_key(bad):
    with pytest.raises(ScheduleError, match="tick."):
        Schedule(TickConfig(**bad))


class RunningClock:
    """Wall time that reads ``start`` when the ticker first looks and runs on from there:
    the ticker sees 07:59:59.8 however long the test took to get it going (a clock set
    when the test began had passed 08:00 on a loaded CI machine, and the cron moment with
    it)."""

    def __init__(self, start: float):
        self.start, self.first_read = start, None

    def __call__(self) -> float:
        if self.first_read is None:
            self.first_read = time.monotonic()
        return self.start + time.monotonic() - self.first_read


async def wait_until(condition, limit=5.0):
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def test_the_ticker_runs_a_cron_tick_with_an_injected_clock(store, queue, recorder):
    config = TickConfig(
        interval=0, schedules=["0 8 * * 1-5"], timezone="Europe/Zurich", deliver_to=["console:"]
    )
    wednesday_before_eight = zurich(2026, 12, 2, 8, 0) - 0.2
    ticker = Ticker(store, config, recorder, clock=RunningClock(wednesday_before_eight))
    await ingest_one(
        queue, Event("gcal", "event/new_calendar_event", {"id": "e1", "summary": "1:1 with Sam"})
    )
    runner = asyncio.create_task(ticker.run_forever())
    try:
        await wait_until(lambda: ticker.results)
    finally:
        runner.cancel()
    assert [r.status for r in ticker.results] == ["ok"]
    trigger = store.call(lambda db: db.execute("SELECT trigger FROM ticks").fetchone()[0])
    assert trigger == "schedule"
    assert recorder.sent[0][1].text.startswith("Briefing · Wed 08:00 · 1 event\n")


async def test_a_poke_ticks_soon(store, queue, recorder):
    config = TickConfig(interval=3600, deliver_to=["console:"])
    ticker = Ticker(store, config, recorder, poke_delay=0)
    queue.on_urgent = ticker.poke
    runner = asyncio.create_task(ticker.run_forever())
    try:
        await ingest_one(
            queue,
            Event(
                "ssh",
                "event/ssh_alert",
                {"id": "a", "severity": "critical", "summary": "db-1 down"},
            ),
        )
        await wait_until(lambda: ticker.results)
    finally:
        runner.cancel()
    assert "URGENT\n• db-1 down" in recorder.sent[0][1].text
    assert ticker.results[0].status == "ok"


async def test_an_event_a_stored_triage_rule_makes_urgent_ticks_soon(store, queue, recorder):
    config = TickConfig(interval=3600, deliver_to=["console:"])
    boss = TickRule({"payload.from": "*@boss.example"}, "urgent", note="the boss")
    await store.run(lambda db: triage_store.add(db, boss, "chat", "slack:U0ANA"))
    ticker = Ticker(store, config, recorder, poke_delay=0)
    queue.on_urgent = ticker.poke
    runner = asyncio.create_task(ticker.run_forever())
    try:
        payload = {"id": "m1", "from": "Big Boss <ceo@boss.example>", "summary": "Call me"}
        await ingest_one(queue, Event("gmail", "event/new_email", payload))
        await wait_until(lambda: ticker.results)
    finally:
        runner.cancel()
    assert "URGENT\n• Call me" in recorder.sent[0][1].text
    trigger = store.call(lambda db: db.execute("SELECT trigger FROM ticks").fetchone()[0])
    assert trigger == "urgent"


async def test_a_busy_lease_is_retried_after_a_pause_not_in_a_spin(store, recorder, monkeypatch):
    monkeypatch.setattr("bothost.events.tick.RETRY_AFTER", 0.2)
    now = time.time()
    store.call(
        lambda db: db.execute(
            "INSERT INTO ticks (trigger, started_at, status) VALUES ('cli', ?, 'ok')", (now - 3600,)
        )
    )
    store.call(lambda db: lease.acquire(db, lease.TICK_LOCK, "elsewhere", now, 300))
    ticker = Ticker(store, TickConfig(interval=60), recorder)
    seen = []
    original = ticker.tick

    async def timed(trigger="manual"):
        result = await original(trigger)
        seen.append((time.monotonic(), result.status))
        return result

    ticker.tick = timed
    runner = asyncio.create_task(ticker.run_forever())
    try:
        await wait_until(lambda: len(seen) >= 2)
    finally:
        runner.cancel()
    assert [s for _, s in seen[:2]] == ["busy", "busy"]
    assert seen[1][0] - seen[0][0] >= 0.19


async def test_a_clock_set_back_does_not_stop_the_timetable(store, queue, recorder):
    """The last tick ran by a clock a day fast that was then set back (NTP, a restored VM):
    the next interval tick is due by the clock as it is now, not a day from now."""
    ahead = time.time() + 86400
    store.call(
        lambda db: db.execute(
            "INSERT INTO ticks (trigger, started_at, status) VALUES ('interval', ?, 'ok')",
            (ahead,),
        )
    )
    await ingest_one(queue, Event("ssh", "event/ssh_alert", {"id": "a", "summary": "db-1 down"}))
    ticker = Ticker(store, TickConfig(interval=0.5, deliver_to=["console:"]), recorder)
    runner = asyncio.create_task(ticker.run_forever())
    try:
        await wait_until(lambda: ticker.results)
    finally:
        runner.cancel()
    assert ticker.results[0].status == "ok" and "db-1 down" in recorder.sent[0][1].text
