"""When the tick runs: the interval, cron schedules and quiet hours, in ``tick.timezone``.

Everything here is a pure function of a clock reading (epoch seconds), so tests inject a
clock instead of waiting. Cron expressions are evaluated with croniter on aware datetimes
in the configured zone, so "0 8 * * 1-5" means 08:00 local time across DST changes. No
zone configured means the machine's zone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bothost.config import TickConfig

QUIET_PATTERN = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*$")
LOCALTIME = Path("/etc/localtime")


class ScheduleError(ValueError):
    """A cron expression, zone or quiet-hours range that cannot be used; ``key`` is its
    key under ``tick`` (what config load names beside the file)."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"tick.{key}: {problem}")
        self.key = key


def zone(name: str | None) -> tzinfo:
    """The zone called ``name``, or the machine's own zone when ``name`` is empty."""
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ScheduleError("timezone", f"unknown time zone {name!r}") from exc
    try:
        with LOCALTIME.open("rb") as fh:
            return ZoneInfo.from_file(fh, key="localtime")
    except (OSError, ValueError):
        return datetime.now().astimezone().tzinfo or ZoneInfo("UTC")


@dataclass(frozen=True)
class QuietHours:
    """A daily range such as 22:00-07:00 (it may wrap past midnight); the end is exclusive.

    ``24:00`` may end a range: the end of the day, so ``00:00-24:00`` is quiet all day and
    ``22:00-24:00`` until midnight (as ``22:00-00:00``)."""

    start: time
    end: time
    all_day: bool = False

    @classmethod
    def parse(cls, text: str | None) -> QuietHours | None:
        if not text:
            return None
        match = QUIET_PATTERN.match(text)
        if not match:
            raise ScheduleError("quiet_hours", f"expected 'HH:MM-HH:MM', got {text!r}")
        h1, m1, h2, m2 = (int(g) for g in match.groups())
        day_end = (h2, m2) == (24, 0)  # the end of the day; never a start
        if h1 > 23 or m1 > 59 or m2 > 59 or (h2 > 23 and not day_end):
            raise ScheduleError("quiet_hours", f"not a time of day in {text!r}")
        if day_end:
            if (h1, m1) == (0, 0):
                return cls(time(0), time(0), all_day=True)
            return cls(time(h1, m1), time(0))
        if (h1, m1) == (h2, m2):
            # An empty range reads as "all day" to some and "never" to others: say which
            # spelling means what instead of picking one silently.
            raise ScheduleError(
                "quiet_hours",
                f"start equals end in {text!r}, an empty range; for no quiet hours leave "
                "quiet_hours unset; for quiet all day write '00:00-24:00'",
            )
        return cls(time(h1, m1), time(h2, m2))

    def contains(self, moment: datetime) -> bool:
        if self.all_day:
            return True
        now = moment.timetz().replace(tzinfo=None)
        if self.start <= self.end:
            return self.start <= now < self.end
        return now >= self.start or now < self.end


class Schedule:
    """The tick timetable of one config: next interval run, next cron run, quiet or not."""

    def __init__(self, config: TickConfig) -> None:
        self.config = config
        self.tz = zone(config.timezone)
        self.quiet = QuietHours.parse(config.quiet_hours)
        if not config.schedules and not config.digest:
            return
        # croniter (and dateutil under it) only when there are schedules: their import was
        # a tenth of every one-shot command's start (issue 19)
        from croniter import croniter

        for i, expr in enumerate(config.schedules):
            if not croniter.is_valid(expr):
                raise ScheduleError(f"schedules[{i}]", f"not a cron expression: {expr!r}")
        if config.digest and not croniter.is_valid(config.digest):
            raise ScheduleError("digest", f"not a cron expression: {config.digest!r}")

    def local(self, now: float) -> datetime:
        return datetime.fromtimestamp(now, self.tz)

    def is_quiet(self, now: float) -> bool:
        return bool(self.quiet and self.quiet.contains(self.local(now)))

    def next_cron(self, after: float, exprs: list[str] | None = None) -> float | None:
        """The first cron moment strictly after ``after`` over all schedules, or None."""
        exprs = self.config.schedules if exprs is None else exprs
        if not exprs:
            return None
        from croniter import croniter

        start = self.local(after)
        moments = [self._next(croniter(expr, start), expr) for expr in exprs]
        return min(moments) if moments else None

    def _next(self, runs: Any, expr: str) -> float:
        """The expression's next moment, skipping the second pass of a repeated hour.

        When clocks go back, croniter matches 02:30 twice (summer and winter time). An
        expression that names its hours ("30 2 * * *") means one run a day, as cron has it;
        one whose hour field is a wildcard ("0 * * * *", "*/2") means every hour that
        passes, so it keeps both.
        """
        fields = expr.split()
        hours = fields[1] if len(fields) > 1 else "*" if expr.strip() == "@hourly" else "0"
        fixed_hours = not hours.startswith("*")
        while True:
            moment = float(runs.get_next(float))
            if not (fixed_hours and self.local(moment).fold):
                return moment

    def next_interval(self, last_tick: float) -> float | None:
        return last_tick + self.config.interval if self.config.interval > 0 else None

    def next_due(self, now: float, last_tick: float, cron_after: float) -> tuple[float, str]:
        """When the next tick is due and why (``interval``, ``schedule`` or ``digest``).

        ``last_tick`` is when the last tick of any process started; ``cron_after`` is the
        point after which cron moments still count (the last cron tick, or start-up: missed
        cron moments while the host was down are not replayed, the interval catches up).
        """
        options = []
        if (when := self.next_interval(last_tick)) is not None:
            options.append((when, "interval"))
        if (when := self.next_cron(cron_after)) is not None:
            options.append((when, "schedule"))
        # on a tie "digest" sorts first: a schedule tick that also posts the low events
        digest = [self.config.digest] if self.config.digest else []
        if (when := self.next_cron(cron_after, digest)) is not None:
            options.append((when, "digest"))
        if not options:
            return (float("inf"), "never")
        return min(options)
