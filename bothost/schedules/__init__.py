"""Scheduled jobs: reminders and checks a person asks for, fired at their time (issue 38).

The API every surface uses (the CLI now; the agent's ``schedule``/``schedules`` tools, the
offline commands and the web dashboard next), all plain functions of a store connection
run with ``await host.store.run(lambda db: …)``:

* :func:`~bothost.schedules.when.parse_when` ``(text, tz, now) -> epoch`` reads "09:00",
  "in 10m", "tomorrow 9:00" or an ISO instant; :func:`~bothost.schedules.when.parse_duration`
  reads "10m"; :func:`~bothost.schedules.when.local_time` shows an instant in a zone.
* :func:`~bothost.schedules.store.add_job` ``(db, owner, target, kind, text, at=|cron=,
  tz=, limits=) -> Job`` checks the limits and stores the job;
  :func:`~bothost.schedules.store.list_jobs` ``(db, owner=None)``;
  :func:`~bothost.schedules.store.cancel_job` ``(db, id, by, admin=False) -> Job``.
* Every refusal is a :class:`~bothost.schedules.errors.ScheduleError` whose message is one
  line for the person.
* :func:`owner_zone` is the zone a person's times are read in when their platform does not
  say (``tick.timezone``, else the machine's).

The host runs :class:`~bothost.schedules.runner.Scheduler` (wired in
:func:`bothost.host.wiring.start_schedules`); docs/schedules.md is the person's view.
"""

from __future__ import annotations

from pathlib import Path

from bothost.config import Config
from bothost.schedules.errors import ScheduleError
from bothost.schedules.store import (
    CHECK,
    MESSAGE,
    Job,
    add_job,
    cancel_job,
    get_job,
    list_jobs,
)
from bothost.schedules.when import local_time, parse_duration, parse_when

ZONEINFO = "zoneinfo/"  # what a name's path holds under /usr/share/zoneinfo

__all__ = [
    "CHECK",
    "MESSAGE",
    "Job",
    "ScheduleError",
    "add_job",
    "cancel_job",
    "get_job",
    "list_jobs",
    "local_time",
    "owner_zone",
    "parse_duration",
    "parse_when",
]


def owner_zone(config: Config, platform_tz: str | None = None) -> str:
    """The zone name a person's times are in: their platform's (Slack's user ``tz``) when
    known, else ``tick.timezone``, else the machine's zone, else UTC."""
    if platform_tz:
        return platform_tz
    if config.tick.timezone:
        return config.tick.timezone
    try:
        target = str(Path("/etc/localtime").resolve())
    except OSError:
        return "UTC"
    _, found, name = target.partition(ZONEINFO)
    return name if found and name else "UTC"
