"""One matcher for field paths and globs (:mod:`bothost.rules.fields`): triage rules and mutes
(``tick.rules`` match) and permission rules (``args``) give the same answer on what they
share — a glob over a string field, a number or flag as its JSON text, a missing field — and
keep what is their own (triage folds case and tries mail addresses; permission rules
compare case as written and take ``re:``)."""

from __future__ import annotations

import pytest

from bothost.config import PermissionRule
from bothost.events.triage import matches as triage_matches
from bothost.models import Address, Session
from bothost.rules.fields import MISSING, fits, lookup
from bothost.rules.match import Rule, match

SESSION = Session(id="console:", address=Address("console", ""), user="root")

SHARED = [
    ("ana@corp.com", "*@corp.com", True),
    ("ana@corp.com", "*@other.com", False),
    ("prod-db-1", "prod-*", True),
    ("prod-db-1", "prod-?", False),
    ("scratch", "scratch", True),
    ("scratch", "[st]cratch", True),
    ("", "*", True),
    (42, "4*", True),
    (True, "true", True),
    ("a.b", "a?b", True),
]


def permission(value, pattern) -> bool:
    rule = Rule(PermissionRule(tool="t", args={"to": pattern}, action="allow"), "config")
    arguments = {} if value is MISSING else {"to": value}
    return match(rule, "t", arguments, SESSION) is not None


def triage(value, pattern) -> bool:
    payload = {} if value is MISSING else {"to": value}
    return triage_matches({"payload.to": pattern}, "src", "event/x", payload)


@pytest.mark.parametrize(("value", "pattern", "expected"), [*SHARED, (MISSING, "*", False)])
def test_triage_and_permission_rules_agree_on_shared_cases(value, pattern, expected):
    assert triage(value, pattern) is expected
    assert permission(value, pattern) is expected


def test_each_keeps_its_own_ways():
    # triage folds case and tries a mail header's bare address
    assert triage("Ana <ANA@Corp.com>", "ana@corp.com")
    assert not permission("Ana <ANA@Corp.com>", "ana@corp.com")
    # permission rules take a regular expression; to triage it is a glob
    assert permission("prod-7", "re:prod-[0-9]+")
    assert not triage("prod-7", "re:prod-[0-9]+")
    # a null payload field names nothing to triage; an argument's null is its JSON text
    assert permission(None, "null") and not triage(None, "null")


def test_lookup_walks_mappings_and_says_missing():
    assert lookup({"a": {"b": 1}}, ["a", "b"]) == 1
    assert lookup({"a": {"b": 1}}, ["a", "c"]) is MISSING
    assert lookup({"a": [1]}, ["a", "0"]) is MISSING  # lists are no mappings
    assert fits("A*", ["abc"], fold_case=True) and not fits("A*", ["abc"])
