"""Stored triage rules: kept with who and when, tried between config rules and the shipped
defaults, read back checked, on SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest

from bothost.config import TickConfig, TickRule
from bothost.events import triage_rules, triage_store
from bothost.events.triage_store import TriageRuleError
from tests.conftest import both_backends

pytestmark = both_backends

MAIL = {
    "source": "gmail",
    "type": "event/new_email",
    "payload": {"from": "Ana <ana@corp.example>", "labels": ["CATEGORY_PROMOTIONS"]},
}


def test_precedence_is_config_then_stored_then_defaults(store):
    config = TickConfig()
    found = store.call(lambda db: triage_rules.decide(db, config, MAIL))
    assert found.ref == "default:gmail-promotions"
    stored = TickRule({"payload.from": "*@corp.example"}, "high", note="Ana matters")
    rule_id = store.call(lambda db: triage_store.add(db, stored, "chat", "slack:U0123ANA"))
    found = store.call(lambda db: triage_rules.decide(db, config, MAIL))
    assert (found.priority, found.ref, found.why) == ("high", f"#{rule_id}", "Ana matters")

    config.rules = [TickRule({"source": "gmail"}, "drop")]
    found = store.call(lambda db: triage_rules.decide(db, config, MAIL))
    assert found.line() == "drop — tick.rules[0] (source=gmail → drop)"
    refs = [e.ref for e in store.call(lambda db: triage_rules.listing(db, config))]
    assert refs[:3] == ["tick.rules[0]", f"#{rule_id}", "default:gmail-promotions"]


def test_rows_keep_origin_who_and_when_and_removals_are_rows(store):
    rule = TickRule({"type": "event/ssh_*"}, "urgent", unless=[{"payload.host": "dev-*"}])
    rule.within = {"payload.start": "2h"}
    rule_id = store.call(lambda db: triage_store.add(db, rule, "button", "web:ana", now=100.0))
    store.call(lambda db: triage_store.remove(db, "default:ssh-resolved", "cli", "cli:root"))
    rules, removals = store.call(triage_store.load)
    assert [(r.id, r.rule, r.origin, r.added_by, r.added_at) for r in rules] == [
        (rule_id, rule, "button", "web:ana", 100.0)
    ]
    assert [(r.name, r.origin, r.added_by) for r in removals] == [
        ("default:ssh-resolved", "cli", "cli:root")
    ]
    book = store.call(lambda db: triage_store.rulebook(db, TickConfig()))
    origins = [origin for origin, _ in book.rules]
    assert origins[0] == f"#{rule_id}" and "default:ssh-resolved" not in origins
    assert store.call(lambda db: triage_store.restore(db, "default:ssh-resolved")) == (
        "Restored default:ssh-resolved."
    )
    assert store.call(triage_store.load)[1] == []


def test_a_row_edited_by_hand_into_nonsense_is_skipped(store):
    good = store.call(
        lambda db: triage_store.add(db, TickRule({"source": "a"}, "low"), "cli", "cli:root")
    )
    bad = store.call(
        lambda db: triage_store.add(db, TickRule({"source": "b"}, "low"), "cli", "cli:root")
    )
    store.call(
        lambda db: db.execute(
            "UPDATE triage_rules SET match = ? WHERE id = ?", [json.dumps({"from": "x"}), bad]
        )
    )
    assert [r.id for r in store.call(triage_store.load)[0]] == [good]


def test_only_checked_rules_are_stored(store):
    with pytest.raises(TriageRuleError, match=r"^rule\.priority: expected one of"):
        store.call(lambda db: triage_store.add(db, TickRule({"source": "a"}, "loud"), "cli", ""))
    with pytest.raises(TriageRuleError, match=r"^rule\.match: a rule needs at least one"):
        store.call(lambda db: triage_store.add(db, TickRule({}, "low"), "cli", ""))
    with pytest.raises(TriageRuleError, match="no stored triage rule #3"):
        store.call(lambda db: triage_store.remove(db, "3", "cli", ""))
    assert store.call(triage_store.load) == ([], [])
