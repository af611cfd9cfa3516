"""The shipped triage defaults: what the bundled sources' events are worth, as visible rules.

They are ordinary rules on the same matcher as ``tick.rules``, each with a name so
``bothost triage list`` can show it and a person can remove it; config rules and stored
rules come first, so any of them can be overridden. They match on event types and payload
fields (Gmail's ``labels``, the calendar's ``start``, the SSH monitor's ``state``), not on
source names, which are whatever the user called the server. After them comes the generic
mapping of a producer's own ``severity``.
"""

from __future__ import annotations

from dataclasses import dataclass

from bothost.config import TickRule

MAIL = "event/new_email"
CALENDAR = ("event/calendar_event_changed", "event/calendar_event_cancelled")
NEW_CALENDAR = "event/new_calendar_event"
SOON = "24h"  # a calendar change inside this window changes someone's day
# Gmail marks these itself; either one outside promotions and social means a person matters
FLAGGED = [{"payload.labels": "IMPORTANT"}, {"payload.labels": "STARRED"}]
# a producer's own severity, after every other rule: critical alarms should not wait
SEVERITY = {"critical": "urgent", "warning": "high", "info": "normal"}


@dataclass(frozen=True)
class DefaultRule:
    """A shipped rule and the stable name ``triage remove default:NAME`` takes."""

    name: str
    rule: TickRule


def _rule(name: str, priority: str, note: str, **match: str) -> DefaultRule:
    keys = {k.replace("__", "."): v for k, v in match.items()}
    return DefaultRule(name, TickRule(match=keys, priority=priority, note=note))


DEFAULT_RULES: tuple[DefaultRule, ...] = (
    *(
        _rule(
            f"gmail-{category.lower()}",
            "low",
            f"Gmail files it under {category.title()}",
            type=MAIL,
            payload__labels=f"CATEGORY_{category}",
        )
        for category in ("PROMOTIONS", "SOCIAL", "FORUMS")
    ),
    DefaultRule(
        "gmail-updates",
        TickRule(
            match={"type": MAIL, "payload.labels": "CATEGORY_UPDATES"},
            unless=FLAGGED,
            priority="low",
            note="Gmail files it under Updates and did not mark it important",
        ),
    ),
    _rule(
        "gmail-important",
        "high",
        "Gmail marked it important",
        type=MAIL,
        payload__labels="IMPORTANT",
    ),
    _rule("gmail-starred", "high", "starred in Gmail", type=MAIL, payload__labels="STARRED"),
    *(
        DefaultRule(
            f"calendar-{kind}-soon",
            TickRule(
                match={"type": type_},
                within={"payload.start": SOON},
                priority="high",
                note=f"a {kind} event that starts within 24 hours",
            ),
        )
        for kind, type_ in (
            ("changed", CALENDAR[0]),
            ("cancelled", CALENDAR[1]),
            ("new", NEW_CALENDAR),
        )
    ),
    _rule(
        "ssh-resolved",
        "low",
        "an alert that has cleared",
        type="event/ssh_alert",
        payload__state="resolved",
    ),
    *(
        _rule(f"severity-{level}", priority, f"the producer says {level}", payload__severity=level)
        for level, priority in SEVERITY.items()
    ),
)


def named(name: str) -> DefaultRule | None:
    """The default rule called ``name`` (with or without its ``default:`` prefix)."""
    name = name.removeprefix("default:")
    return next((d for d in DEFAULT_RULES if d.name == name), None)
