"""``bothost triage``: rules added, removed and tested from the command line change the next
tick, through the real root group and a home of the test's own."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bothost.cli import cli

PROMO = {
    "id": "m1",
    "summary": "50% off everything this weekend",
    "severity": "info",
    "from": "Deals Weekly <news@deals.example>",
    "labels": ["UNREAD", "CATEGORY_PROMOTIONS", "INBOX"],
}


@pytest.fixture
def bothost(home):
    (home / "bothost.yaml").write_text("tick: {deliver_to: ['console:']}\n")
    runner = CliRunner()

    def run(*args, code=0):
        result = runner.invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code == code, result.output + result.stderr
        return result

    return run


def push(bothost, payload, type_="event/new_email"):
    bothost("events", "push", "gmail", type_, json.dumps(payload))


def section(text: str, heading: str) -> str:
    lines = text.splitlines()
    if heading not in lines:
        return ""
    after = lines[lines.index(heading) + 1 :]
    return "\n".join(
        after[: next((i for i, ln in enumerate(after) if not ln.startswith("•")), None)]
    )


def test_triage_add_changes_the_next_tick(bothost):
    push(bothost, {"id": "a1", "from": "Ana <ana@corp.example>", "summary": "Lunch today?"})
    assert "Lunch today?" in section(bothost("tick").stdout, "FYI")

    added = bothost(
        "triage", "add", "--match", "payload.from=*@corp.example", "--priority", "high",
        "--note", "mail from corp matters",
    )  # fmt: skip
    assert added.stdout == "Added triage rule #1: payload.from=*@corp.example → high.\n"
    push(bothost, {"id": "a2", "from": "Ana <ana@corp.example>", "summary": "Lunch tomorrow?"})
    assert "Lunch tomorrow?" in section(bothost("tick").stdout, "HIGH")

    listed = json.loads(bothost("triage", "list", "--json").stdout)["rules"]
    assert listed[0]["ref"] == "#1" and listed[0]["origin"] == "cli"
    assert listed[0]["added_by"].startswith("cli:") and listed[0]["note"]
    assert listed[1]["ref"] == "default:gmail-promotions"

    bothost("triage", "remove", "1")
    push(bothost, {"id": "a3", "from": "Ana <ana@corp.example>", "summary": "Coffee?"})
    assert "Coffee?" in section(bothost("tick").stdout, "FYI")


def test_removing_a_default_makes_a_promotion_normal_and_restore_brings_it_back(bothost):
    event = json.dumps({"source": "gmail", "type": "event/new_email", "payload": PROMO})
    before = bothost("triage", "test", event).stdout
    assert before == "low — default:gmail-promotions (Gmail files it under Promotions)\n"

    removed = bothost("triage", "remove", "default:gmail-promotions").stdout
    assert removed.startswith("Removed default:gmail-promotions;")
    text = bothost("triage", "list").stdout
    assert "off  default:gmail-promotions  (removed by cli:" in text
    assert bothost("triage", "test", event).stdout.startswith("normal — default:severity-info")
    push(bothost, PROMO)
    assert "50% off everything" in section(bothost("tick").stdout, "FYI")

    assert bothost("triage", "restore", "default:gmail-promotions").stdout == (
        "Restored default:gmail-promotions.\n"
    )
    assert bothost("triage", "test", event).stdout == before


def test_triage_test_names_the_deciding_rule_in_json(bothost):
    mail = {"source": "gmail", "type": "event/new_email", "payload": {"labels": ["IMPORTANT"]}}
    found = json.loads(bothost("triage", "test", "--json", json.dumps(mail)).stdout)
    assert found == {
        "priority": "high",
        "rule": "default:gmail-important",
        "why": "Gmail marked it important",
        "match": {"type": "event/new_email", "payload.labels": "IMPORTANT"},
    }
    plain = {"source": "x", "type": "event/y", "payload": {}}
    assert bothost("triage", "test", json.dumps(plain)).stdout == (
        "normal — fallback (no rule matched)\n"
    )


def test_a_bad_rule_is_one_line_and_nothing_is_stored(bothost):
    bad = bothost("triage", "add", "--match", "from=*@corp.example", "--priority", "high", code=2)
    assert bad.stderr == (
        "bothost: rule.match: unknown match key 'from'; expected source, type or "
        "payload.<field> (e.g. payload.from)\n"
    )
    late = bothost(
        "triage", "add", "--match", "type=event/x", "--within", "payload.start=soon",
        "--priority", "high", code=2,
    )  # fmt: skip
    assert late.stderr.count("\n") == 1 and "payload.start" in late.stderr
    assert bothost("triage", "remove", "7", code=1).stderr == (
        "bothost: no stored triage rule #7 (bothost triage list)\n"
    )
    assert "no shipped default" in bothost("triage", "remove", "default:nope", code=1).stderr
    assert json.loads(bothost("triage", "list", "--json").stdout)["rules"][0]["ref"] == (
        "default:gmail-promotions"
    )


def test_listing_a_fresh_home_shows_the_defaults_and_creates_nothing(tmp_path, monkeypatch):
    home = tmp_path / "nowhere"
    monkeypatch.setenv("BOTHOST_HOME", str(home))
    result = CliRunner().invoke(cli, ["triage", "list"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "default:gmail-important" in result.stdout
    assert not home.exists()


def test_triage_add_and_remove_change_the_next_dry_run(bothost, tmp_path):
    events = tmp_path / "events.jsonl"
    lines = [
        {"source": "gmail", "type": "event/new_email", "payload": PROMO},
        {"source": "gmail", "type": "event/new_email", "payload": {"from": "ana@corp.example"}},
    ]
    events.write_text("".join(json.dumps(line) + "\n" for line in lines))

    def priorities():
        out = bothost("tick", "--dry-run", "--events", str(events), "--json").stdout
        return [e["priority"] for e in json.loads(out)["events"]]

    assert priorities() == ["low", "normal"]
    bothost("triage", "add", "--match", "payload.from=*@corp.example", "--priority", "urgent")
    bothost("triage", "remove", "default:gmail-promotions")
    assert priorities() == ["normal", "urgent"]
