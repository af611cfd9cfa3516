"""When a job runs: the words a person gives for a time, and a cron's next moment.

Everything here is a pure function of a clock reading (epoch seconds) and a zone, so the
CLI, the agent's tools and the offline commands read "09:00", "in 10m", "tomorrow 9:00" or
an ISO instant the same way, and tests inject ``now``. Cron expressions are evaluated with
croniter on aware datetimes in the owner's zone (as the tick's :mod:`bothost.events.schedule`
does), so "0 9 * * 1" means 09:00 local time across DST changes.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bothost.schedules.errors import ScheduleError

# "10m", "1h30m", "2d", "90s": one or more number-unit pairs
DURATION_PART = re.compile(r"(\d+)\s*(s|sec|secs|m|min|mins|h|hr|hrs|d|day|days|w)(?![a-z])", re.I)
UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
CLOCK = re.compile(r"^(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$", re.I)
CRON_SAMPLES = 12  # consecutive moments checked against the shortest repeat


def zone_named(name: str) -> tzinfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ScheduleError(f"unknown time zone {name!r}") from exc


def parse_duration(text: str) -> float:
    """Seconds in ``10m``, ``1h30m``, ``2d``, ``90s`` (a leading ``in`` is allowed)."""
    rest = text.strip().lower().removeprefix("in ").strip()
    total, end = 0, 0
    for match in DURATION_PART.finditer(rest):
        if rest[end : match.start()].strip():
            break
        total += int(match.group(1)) * UNIT[match.group(2)[0].lower()]
        end = match.end()
    if end == 0 or rest[end:].strip() or total <= 0:
        raise ScheduleError(f"expected a duration such as 10m, 2h or 1d, got {text!r}")
    return float(total)


def parse_when(text: str, tz: str, now: float) -> float:
    """The instant ``text`` names, in epoch seconds, read in zone ``tz`` at ``now``.

    Accepts ``in 10m`` / ``10m``, ``09:00`` / ``9pm`` (today, or tomorrow once passed),
    ``tomorrow 9:00``, ``2026-12-07 09:00`` and ISO 8601 with or without an offset (without
    one: the zone's local time). A time in the past is an error."""
    zone = zone_named(tz)
    words = text.strip()
    low = words.lower()
    local_now = datetime.fromtimestamp(now, zone)
    when: datetime | None = None
    if low.startswith("in ") or DURATION_PART.fullmatch(low.replace(" ", "")):
        return now + parse_duration(low)
    day_offset = 0
    if low.startswith("tomorrow"):
        day_offset, low = 1, low.removeprefix("tomorrow").strip().removeprefix("at ").strip()
    elif low.startswith("today"):
        low = low.removeprefix("today").strip().removeprefix("at ").strip()
    clock = CLOCK.match(low.removeprefix("at ").strip())
    if clock:
        when = _at_clock(local_now, clock, day_offset)
        if day_offset == 0 and when.timestamp() <= now:
            when = _at_clock(local_now, clock, 1)  # "09:00" said at 10:00 means tomorrow
    elif day_offset == 0:
        try:
            when = datetime.fromisoformat(words)
        except ValueError:
            pass
        if when is not None and when.tzinfo is None:
            when = when.replace(tzinfo=zone)
    if when is None:
        raise ScheduleError(
            f"cannot read {text!r} as a time: say 09:00, in 10m, tomorrow 9:00 or an ISO time"
        )
    if when.timestamp() <= now:
        raise ScheduleError(f"{text!r} is in the past")
    return when.timestamp()


def _at_clock(local_now: datetime, clock: re.Match[str], day_offset: int) -> datetime:
    hour, minute = int(clock.group(1)), int(clock.group(2) or 0)
    half = (clock.group(3) or "").lower()
    if half == "pm" and hour < 12:
        hour += 12
    elif half == "am" and hour == 12:
        hour = 0
    if hour > 23 or minute > 59:
        raise ScheduleError(f"{clock.group(0)!r} is not a time of day")
    day = (local_now + timedelta(days=day_offset)).date()
    naive = datetime(day.year, day.month, day.day, hour, minute)
    return naive.replace(tzinfo=local_now.tzinfo)


def check_cron(expr: str, tz: str, min_repeat: float, now: float) -> None:
    """ScheduleError unless ``expr`` is a cron of five fields whose runs are at least
    ``min_repeat`` seconds apart (checked over its next moments from ``now``)."""
    # here, not at the top: a turn with a model loads this module with the scheduling
    # tools, and croniter (with dateutil) is ~15 ms of `chat -m`'s start for a cron
    # nobody gave (tests/core/test_chat_model_imports.py)
    from croniter import croniter

    if len(expr.split()) != 5 or not croniter.is_valid(expr):
        raise ScheduleError(f"not a cron expression of five fields: {expr!r}")
    it = croniter(expr, datetime.fromtimestamp(now, zone_named(tz)))
    moments = [it.get_next(datetime).timestamp() for _ in range(CRON_SAMPLES)]
    shortest = min(b - a for a, b in zip(moments, moments[1:], strict=False))
    if shortest < min_repeat:
        raise ScheduleError(
            f"{expr!r} repeats every {shortest / 60:g} min; the shortest repeat is"
            f" {min_repeat / 60:g} min (schedules.min_repeat)"
        )


def next_cron(expr: str, tz: str, after: float) -> float:
    """The first moment of ``expr`` in zone ``tz`` strictly after ``after``."""
    from croniter import croniter  # as in check_cron: only a cron job needs it

    it = croniter(expr, datetime.fromtimestamp(after, zone_named(tz)))
    return float(it.get_next(datetime).timestamp())


def local_time(epoch: float, tz: str, now: float | None = None) -> str:
    """``09:00`` on the day of ``now``, else ``Tue 2026-12-08 09:00``; and the zone."""
    zone = zone_named(tz)
    moment = datetime.fromtimestamp(epoch, zone)
    same_day = now is not None and datetime.fromtimestamp(now, zone).date() == moment.date()
    return moment.strftime("%H:%M" if same_day else "%a %Y-%m-%d %H:%M")
