"""The offline agent's words for scheduled jobs: ``remind``, ``reminders``, ``cancel N``.

Each becomes a call of the ``schedule`` or ``schedules`` tool (:mod:`bothost.schedules.tools`),
so the offline agent answers exactly what a model's call would: "Reminder set for 09:00
Europe/Zurich (job 3)." A whole message ``cancel`` is a stop word (it stops the running
turn, :data:`bothost.api.STOP_WORDS`); ``cancel 3`` is this command.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from bothost.hookspecs import OfflineCommand

REMIND_USAGE = "Usage: remind at 09:00 TEXT | remind in 10m TEXT | remind at tomorrow 9:00 TEXT"
CANCEL_USAGE = "Usage: cancel N (a job's number, from `reminders`)"
DATE = re.compile(r"\d{4}-\d{2}-\d{2}$")  # "2026-12-24 18:00": the date, then the clock


def remind(rest: str) -> tuple[str, dict[str, Any]] | str:
    """``at WHEN TEXT`` or ``in DURATION TEXT``: the ``schedule`` call it asks for."""
    words = rest.split()
    if len(words) < 3 or words[0].lower() not in ("at", "in"):
        return REMIND_USAGE
    how, words = words[0].lower(), words[1:]
    taken = 1
    if how == "at" and (words[0].lower() in ("today", "tomorrow") or DATE.match(words[0])):
        taken = 2  # "tomorrow 9:00", "2026-12-24 18:00"
    when, text = " ".join(words[:taken]), " ".join(words[taken:])
    if not text:
        return REMIND_USAGE
    return "schedule", {"when": f"in {when}" if how == "in" else when, "text": text}


def cancel(rest: str) -> tuple[str, dict[str, Any]] | str:
    number = rest.strip().removeprefix("#")
    if not number.isdigit():
        return CANCEL_USAGE
    return "schedules", {"action": "cancel", "id": int(number)}


def register_offline_commands(register: Callable[[str, str, OfflineCommand], None]) -> None:
    register("remind", "remind at 09:00 TEXT  a reminder here (or: remind in 10m TEXT)", remind)
    register(
        "reminders",
        "reminders            your scheduled reminders and checks",
        lambda rest: ("schedules", {"action": "list"}),
    )
    register("cancel", "cancel N             cancel scheduled job N", cancel)
