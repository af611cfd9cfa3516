"""Offline triage: rules on real payload shapes, the default, grouping and its wording."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from bothost.config import TickRule
from bothost.events.triage import QueuedEvent, Rulebook, classify, group, rule_priority

ZURICH = ZoneInfo("Europe/Zurich")
T0 = 1_800_000_000.0

# shaped like the bundled gmail server's event/new_email payload
MAIL = {
    "id": "18c",
    "summary": "New email from Ana Lopez <Ana@Corp.com>: Budget review",
    "from": "Ana Lopez <Ana@Corp.com>",
    "subject": "Budget review",
    "labels": ["INBOX", "CATEGORY_PROMOTIONS"],
    "url": "https://mail.google.com/x",
}


def test_an_address_glob_matches_a_full_from_header():
    rules = [TickRule({"source": "gmail", "payload.from": "*@corp.com"}, "high")]
    assert rule_priority("gmail", "event/new_email", MAIL, rules) == "high"
    assert (
        rule_priority("gmail", "event/new_email", {**MAIL, "from": "x@other.org"}, rules)
        == "normal"
    )


def test_a_glob_matches_any_item_of_a_list_and_nested_fields():
    rules = [TickRule({"payload.labels": "category_promotions"}, "drop")]
    assert rule_priority("gmail", "event/new_email", MAIL, rules) == "drop"
    nested = [TickRule({"payload.disk.mount": "/var*"}, "urgent")]
    assert (
        rule_priority("ssh", "event/ssh_alert", {"disk": {"mount": "/var/lib"}}, nested) == "urgent"
    )


def test_unmatched_events_are_normal_unless_the_producer_says_critical():
    assert rule_priority("x", "event/y", {}, []) == "normal"
    assert rule_priority("x", "event/y", {"severity": "critical"}, []) == "urgent"
    first_wins = [TickRule({"source": "x"}, "low"), TickRule({"source": "x"}, "urgent")]
    assert rule_priority("x", "event/y", {"severity": "critical"}, first_wins) == "low"


def test_groups_read_naturally():
    events = [
        QueuedEvent(1, "gmail", "event/new_email", MAIL, T0),
        QueuedEvent(2, "gmail", "event/new_email", {**MAIL, "from": "ana@corp.com"}, T0 + 1),
        QueuedEvent(3, "ssh", "event/ssh_alert", {"alias": "db-1", "summary": "disk 95%"}, T0),
        QueuedEvent(4, "ssh", "event/ssh_alert", {"alias": "db-1", "summary": "load 9"}, T0),
        QueuedEvent(
            5, "weather", "event/weather_alert", {"location": "Zurich", "summary": "Rain"}, T0
        ),
        QueuedEvent(
            6, "weather", "event/weather_alert", {"location": "Zurich", "summary": "Wind"}, T0 + 5
        ),
        QueuedEvent(
            7,
            "hook",
            "webhook",
            {"summary": "deploy done", "occurred_at": "2027-01-15T08:00:00Z"},
            T0,
        ),
    ]
    items = group(events, classify(events, Rulebook(), []), ZURICH)
    assert [(i.summary, i.why) for i in items] == [
        (
            "2 new emails from ana@corp.com",
            "latest: New email from Ana Lopez <Ana@Corp.com>: Budget review",
        ),
        ("2 ssh alerts on db-1", "latest: load 9"),
        ("2 weather alerts for Zurich", "latest: Wind"),
        ("deploy done (webhook, 09:00)", ""),
    ]
