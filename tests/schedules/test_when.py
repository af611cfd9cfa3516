"""Reading the times a person gives: "09:00", "in 10m", "tomorrow 9:00", ISO; cron bounds."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from bothost.schedules import ScheduleError, parse_duration, parse_when
from bothost.schedules.when import check_cron, next_cron

ZURICH = "Europe/Zurich"
# Tuesday 2026-12-08 10:30 in Zurich
NOW = datetime(2026, 12, 8, 10, 30, tzinfo=ZoneInfo(ZURICH)).timestamp()


def local(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, ZoneInfo(ZURICH)).strftime("%Y-%m-%d %H:%M")


def test_durations():
    assert parse_duration("10m") == 600
    assert parse_duration("in 1h30m") == 5400
    assert parse_duration("2d") == 172800
    for bad in ("", "soon", "0m", "10x", "m10"):
        with pytest.raises(ScheduleError):
            parse_duration(bad)


def test_clock_times_are_today_or_tomorrow_in_the_zone():
    assert local(parse_when("11:00", ZURICH, NOW)) == "2026-12-08 11:00"
    assert local(parse_when("09:00", ZURICH, NOW)) == "2026-12-09 09:00"  # passed: tomorrow
    assert local(parse_when("9pm", ZURICH, NOW)) == "2026-12-08 21:00"
    assert local(parse_when("tomorrow 9:00", ZURICH, NOW)) == "2026-12-09 09:00"
    assert local(parse_when("tomorrow at 8", ZURICH, NOW)) == "2026-12-09 08:00"


def test_relative_and_iso_times():
    assert parse_when("in 10m", ZURICH, NOW) == NOW + 600
    assert local(parse_when("2026-12-24 18:00", ZURICH, NOW)) == "2026-12-24 18:00"
    assert (
        parse_when("2026-12-24T17:00:00+00:00", ZURICH, NOW)
        == datetime(2026, 12, 24, 17, tzinfo=ZoneInfo("UTC")).timestamp()
    )


def test_unreadable_and_past_times_are_refused_in_one_line():
    with pytest.raises(ScheduleError, match="cannot read"):
        parse_when("whenever", ZURICH, NOW)
    with pytest.raises(ScheduleError, match="in the past"):
        parse_when("2026-12-01 09:00", ZURICH, NOW)
    with pytest.raises(ScheduleError, match="not a time of day"):
        parse_when("25:00", ZURICH, NOW)
    with pytest.raises(ScheduleError, match="time zone"):
        parse_when("09:00", "Mars/Olympus", NOW)


def test_cron_in_the_owner_zone_and_its_shortest_repeat():
    assert local(next_cron("0 9 * * *", ZURICH, NOW)) == "2026-12-09 09:00"
    check_cron("*/5 * * * *", ZURICH, 300, NOW)
    with pytest.raises(ScheduleError, match="shortest repeat is 5 min"):
        check_cron("* * * * *", ZURICH, 300, NOW)
    with pytest.raises(ScheduleError, match="five fields"):
        check_cron("every monday", ZURICH, 300, NOW)
