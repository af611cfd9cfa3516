"""The queue's urgent question gives the rulebook's own answer, for every kind of rule."""

from __future__ import annotations

import itertools

from bothost.config import TickConfig, TickRule
from bothost.events import triage_store
from bothost.events.triage import Rulebook
from bothost.events.urgency import Urgency
from bothost.store import Store, core_migrations

SOURCES = ("gmail", "ssh", "boss-mail")
TYPES = ("event/new_email", "event/ssh_alert", "event/new_calendar_event", "event/x")
PAYLOADS = (
    {},
    {"severity": "critical"},
    {"severity": "CRITICAL", "from": "ceo@boss.example"},
    {"severity": "warning", "host": "db-1"},
    {"from": "Big Boss <CEO@boss.example>"},
    {"from": "ana@corp.example", "labels": ["IMPORTANT", "INBOX"]},
    {"from": "ceo@boss.example", "labels": ["CATEGORY_PROMOTIONS"], "severity": "critical"},
    {"state": "resolved", "severity": "critical"},
    {"start": "2026-12-06T10:00:00Z", "severity": "critical"},
    {"severity": ["critical"]},
    {"severity": None},
    {"nested": {"level": "critical"}},
)
STORED = [
    TickRule({"payload.from": "*@boss.example"}, "urgent"),
    TickRule({"payload.labels": "CATEGORY_PROMOTIONS"}, "drop"),
    TickRule(
        {"source": "ssh", "payload.host": "db-*"}, "urgent", unless=[{"payload.state": "resolved"}]
    ),
    TickRule({"payload.nested.level": "critical"}, "urgent"),
    TickRule({"type": "event/new_calendar_event"}, "urgent", within={"payload.start": "24h"}),
    TickRule({"source": "boss-*"}, "low"),
]
CONFIG = [TickRule({"type": "event/ssh_alert", "payload.severity": "warning"}, "normal")]


def books() -> list[tuple[Rulebook, TickConfig]]:
    found = []
    for config_rules, defaults in itertools.product(([], CONFIG), (True, False)):
        config = TickConfig(rules=list(config_rules), defaults=defaults)
        for size in range(len(STORED) + 1):
            stored = [(f"#{i}", rule) for i, rule in enumerate(STORED[:size])]
            found.append((Rulebook.build(config.rules, stored, defaults=defaults), config))
            found.append((Rulebook.build(config.rules, stored[::-1], defaults=defaults), config))
    return found


def test_urgent_is_the_rulebooks_urgent_for_every_event_and_book():
    for book, config in books():
        urgency = Urgency(config)
        urgency.book = book
        for source, type_, payload in itertools.product(SOURCES, TYPES, PAYLOADS):
            want = book.decide(source, type_, payload)[0] == "urgent"
            assert urgency.urgent(source, type_, payload) is want, (book, source, type_, payload)


def test_a_rule_stored_in_this_process_is_read_at_the_next_refresh(tmp_path):
    store = Store(tmp_path / "x.db", core_migrations())
    try:
        urgency = Urgency(TickConfig(), clock=lambda: 0.0)  # REFRESH never passes
        store.call(urgency.refresh)
        mail = ("gmail", "event/new_email", {"from": "ceo@boss.example"})
        assert not urgency.urgent(*mail)
        boss = TickRule({"payload.from": "*@boss.example"}, "urgent")
        number = store.call(lambda db: triage_store.add(db, boss, "cli", "cli:ana"))
        store.call(urgency.refresh)
        assert urgency.urgent(*mail)
        store.call(lambda db: triage_store.remove(db, str(number), "cli", "cli:ana"))
        store.call(urgency.refresh)
        assert not urgency.urgent(*mail)
    finally:
        store.close()
