"""Identities in permission rules are platform-qualified: at load, in the store, in listings.

A bare id of Slack's shape in ``permissions`` is a Slack id; any other bare id is refused at
load naming its key path; rows stored before identities were qualified are rewritten by the
store migration (core:13) with the same reading; ``bothost rules list`` shows the qualified
form. What a rule covers at run time is in ``tests/web/test_rule_identities.py``.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bothost.cli import cli
from bothost.config import PermissionRule, RuleWho
from bothost.models import Address, Session
from bothost.rules import store as rule_store
from bothost.rules.match import RuleError, match, spec_from_data
from bothost.store import Store
from bothost.store.migrations import core_migrations
from tests.core.test_rules_cli import QUIET, bothost

ANA = Session("slack:C0OPS0001:1.2", Address("slack", "C0OPS0001", "1.2"), "U0123ANA")
SENDER = Session("webhook:C0OPS0001", Address("webhook", "C0OPS0001"), "U0123ANA")


@pytest.mark.parametrize(
    "who,key,value",
    [
        ("{users: [ana]}", "who.users[0]", "ana"),
        ("{users: [U0123ANA, 'U*']}", "who.users[1]", "U*"),
        ("{channels: [ops]}", "who.channels[0]", "ops"),
        ("{channels: [C0OPS]}", "who.channels[0]", "C0OPS"),  # too short for a Slack id
    ],
)
def test_a_bare_id_not_of_slacks_shape_is_refused_at_load(home, tmp_path, who, key, value):
    config = tmp_path / "bare.yaml"
    config.write_text(
        QUIET
        + f"permissions: [{{tool: x, action: allow}}, {{tool: x, action: allow, who: {who}}}]\n"
    )
    result = bothost(home, "--config", str(config), "config", "show")
    assert result.returncode == 2, result
    assert f"permissions[1].{key}: {value!r} names no platform" in result.stderr
    assert "slack:ID, web:NAME, webhook:NAME" in result.stderr
    assert "Traceback" not in result.stderr


def test_rules_list_shows_qualified_ids(home):
    (home / "bothost.yaml").write_text(
        QUIET
        + "permissions:\n"
        + "  - {tool: a, action: allow, who: {users: [U0123ANA], channels: [C0OPS0001]}}\n"
        + "  - {tool: b, action: deny, who: {users: ['webhook:ci-bot', 'web:*']}}\n"
    )
    runner = CliRunner()
    run = runner.invoke(
        cli, ["--home", str(home), "rules", "add", "c", "ask", "--user", "W0123BOB"]
    )
    assert run.exit_code == 0, run.output
    refused = runner.invoke(cli, ["--home", str(home), "rules", "add", "c", "ask", "--user", "bob"])
    assert refused.exit_code == 2 and "who.users[0]: 'bob' names no platform" in refused.output
    listed = runner.invoke(cli, ["--home", str(home), "rules", "list"]).stdout.splitlines()
    assert "who.users=slack:W0123BOB" in listed[1]
    assert "who.users=slack:U0123ANA  who.channels=slack:C0OPS0001" in listed[2]
    assert "who.users=webhook:ci-bot,web:*" in listed[3]
    data = json.loads(runner.invoke(cli, ["--home", str(home), "rules", "list", "--json"]).stdout)
    assert [r["who"] for r in data["rules"]] == [
        {"users": ["slack:W0123BOB"]},
        {"users": ["slack:U0123ANA"], "channels": ["slack:C0OPS0001"]},
        {"users": ["webhook:ci-bot", "web:*"]},
    ]


def old_row(db, kind, action, who):
    """A row as a host before core:13 wrote it: bare ids in ``who``."""
    db.execute(
        "INSERT INTO permission_rules (kind, position, tool, args, exact, who, action, note,"
        " created_by, created_at) VALUES (?, 1, 'wipe', '{}', 0, ?, ?, '', 'U0123ANA', 0)",
        [kind, json.dumps(who), action],
    )


def test_the_migration_qualifies_stored_ids(tmp_path):
    path = tmp_path / "bothost.db"
    older = [m for m in core_migrations() if m.number < 13]
    store = Store(path, older)
    rows = [
        ("remembered", "allow", {"users": ["U0123ANA"]}),
        ("rule", "allow", {"users": ["ana"], "channels": ["C0OPS0001"]}),
        ("rule", "deny", {"users": ["ana"], "channels": ["ops", "slack:C1"]}),
        ("rule", "ask", {"admins": True}),
    ]
    for kind, action, who in rows:
        store.call(lambda db, k=kind, a=action, w=who: old_row(db, k, a, w))
    store.close()
    store = Store(path, core_migrations())
    rules, answers = store.call(rule_store.load)
    store.close()
    assert answers[0].to_dict()["who"] == {"users": ["slack:U0123ANA"]}
    assert [r.to_dict()["who"] for r in rules] == [
        # an allow for an id whose platform cannot be told now matches nobody
        {"users": ["unknown:ana"], "channels": ["slack:C0OPS0001"]},
        # a deny or ask keeps covering that id on any platform (covering more only refuses)
        {"users": ["*:ana"], "channels": ["*:ops", "slack:C1"]},
        {"admins": True},
    ]
    assert match(answers[0], "wipe", {}, ANA) and not match(answers[0], "wipe", {}, SENDER)
    assert not match(rules[0], "wipe", {}, SENDER)
    assert match(rules[1], "wipe", {}, Session("web:x", Address("web", "ops"), "ana"))


def test_a_row_an_older_host_writes_after_the_migration_is_read_the_same_way(tmp_path):
    store = Store(tmp_path / "bothost.db", core_migrations())
    store.call(lambda db: old_row(db, "remembered", "allow", {"users": ["U0123ANA"]}))
    store.call(lambda db: old_row(db, "rule", "allow", {"users": ["ana"]}))
    rules, answers = store.call(rule_store.load)
    store.close()
    assert answers[0].to_dict()["who"] == {"users": ["slack:U0123ANA"]}
    assert rules[0].to_dict()["who"] == {"users": ["unknown:ana"]}
    assert not match(answers[0], "wipe", {}, SENDER)


def test_a_rule_made_in_code_with_a_bare_id_matches_only_slack():
    bare = rule_store.Rule(
        PermissionRule(tool="*", action="allow", who=RuleWho(users=["U0123ANA"])), "stored"
    )
    assert match(bare, "t", {}, ANA) and not match(bare, "t", {}, SENDER)
    other = rule_store.Rule(
        PermissionRule(tool="*", action="allow", who=RuleWho(channels=["ops"])), "stored"
    )
    assert not match(other, "t", {}, Session("webhook:ops", Address("webhook", "ops"), "x"))
    with pytest.raises(RuleError, match=r"^who\.users\[0\]: 'ana' names no platform"):
        spec_from_data({"tool": "x", "action": "allow", "who": {"users": ["ana"]}})
