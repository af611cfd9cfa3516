"""``bothost tick --dry-run``: the tick's own triage and briefing, with nothing written."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from bothost.cli import cli

ELEVEN = Path(__file__).parent / "data" / "eleven_events.jsonl"
AT = "2026-12-06T18:11:00+01:00"


@pytest.fixture
def bothost(home):
    (home / "bothost.yaml").write_text(
        "tick:\n  deliver_to: ['console:']\n  timezone: Europe/Zurich\n"
    )
    runner = CliRunner()

    def run(*args, code=0):
        result = runner.invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code == code, result.output + result.stderr
        return result

    return run


def dump(home: Path) -> tuple[bytes, list[str]]:
    """The database file's bytes and its SQL dump (no other connection is open)."""
    raw = (home / "bothost.db").read_bytes()
    db = sqlite3.connect(home / "bothost.db")
    try:
        return raw, list(db.iterdump())
    finally:
        db.close()


def test_the_eleven_events_replayed_read_as_a_person_would(bothost):
    out = bothost("tick", "--dry-run", "--events", str(ELEVEN), "--now", AT, "--json")
    found = json.loads(out.stdout)
    assert [e["index"] for e in found["events"]] == list(range(11))
    priorities = [e["priority"] for e in found["events"]]
    assert priorities[:2] == ["urgent", "urgent"]
    assert priorities[4] == "high"  # Ana's contract, Gmail marked it important
    assert priorities[7] == "high"  # the board meeting, moved to tomorrow 09:00
    assert [priorities[i] for i in (2, 3, 6)] == ["low", "low", "low"]  # promotion, news, social
    briefing = found["briefing"]
    urgent = [i for i in briefing["items"] if i["priority"] == "urgent"]
    assert [i["events"] for i in urgent] == [[0], [1]]
    assert sorted(briefing["folded"]) == [2, 3, 6]
    assert all(not set(i["events"]) & {2, 3, 6} for i in briefing["items"])
    assert "+ 3 low: " in briefing["text"] and "Deals Weekly" not in briefing["text"]

    text = bothost("tick", "--dry-run", "--events", str(ELEVEN), "--now", AT)
    assert text.stdout.strip() == briefing["text"].strip()


def test_a_replay_of_the_queue_and_of_a_file_writes_nothing(bothost, home):
    for line in ELEVEN.read_text().splitlines():
        event = json.loads(line)
        bothost("events", "push", event["source"], event["type"], json.dumps(event["payload"]))
    before = dump(home)

    queue = json.loads(bothost("tick", "--dry-run", "--now", AT, "--json").stdout)
    assert [e["id"] for e in queue["events"]] == list(range(1, 12))
    assert [e["priority"] for e in queue["events"]][:2] == ["urgent", "urgent"]
    assert queue["briefing"] is not None
    bothost("tick", "--dry-run", "--now", AT)
    bothost("tick", "--dry-run", "--events", str(ELEVEN), "--json")

    assert dump(home) == before  # no row, no page: byte for byte
    listed = json.loads(bothost("events", "list", "--json").stdout)
    assert {e["status"] for e in listed} == {"pending"} and len(listed) == 11
    assert json.loads(bothost("briefings", "--json").stdout) == []


def test_a_batch_of_only_low_events_would_post_nothing_but_its_digest_would(bothost, tmp_path):
    lines = ELEVEN.read_text().splitlines()
    low = tmp_path / "low.jsonl"
    low.write_text("\n".join(lines[i] for i in (2, 3, 6)) + "\n")
    found = json.loads(bothost("tick", "--dry-run", "--events", str(low), "--json").stdout)
    assert found == {
        "events": [{"index": n, "priority": "low"} for n in range(3)],
        "briefing": None,
    }
    said = bothost("tick", "--dry-run", "--events", str(low))
    assert said.stdout == "" and "No briefing would be posted" in said.stderr
    digest = json.loads(
        bothost("tick", "--dry-run", "--digest", "--events", str(low), "--json").stdout
    )
    assert digest["briefing"]["items"] == [] and sorted(digest["briefing"]["folded"]) == [0, 1, 2]


def test_a_muted_event_reports_drop(bothost, home, tmp_path):
    bothost("events", "push", "test", "ping", "{}")  # makes the home and its database
    db = sqlite3.connect(home / "bothost.db")
    with db:  # a mute as the briefing's button leaves it
        db.execute(
            "INSERT INTO mutes (source, type, match, created_at) VALUES (?, ?, ?, 0)",
            ("weather", None, json.dumps({"payload.kind": "rain"})),
        )
    db.close()
    events = tmp_path / "two.jsonl"
    events.write_text("\n".join(ELEVEN.read_text().splitlines()[8:10]) + "\n")
    found = json.loads(bothost("tick", "--dry-run", "--events", str(events), "--json").stdout)
    assert [e["priority"] for e in found["events"]] == ["normal", "drop"]
    assert "Muted: " in found["briefing"]["text"]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("not json", "line 2: "),
        ('["a list"]', "line 2: expected an object"),
        ('{"source": "", "type": "t", "payload": {}}', "line 2: 'source'"),
        ('{"source": "s", "type": "t", "payload": []}', "line 2: 'payload' must be an object"),
        ('{"source": "s", "type": "t", "received_at": "yesterday"}', "line 2: 'received_at'"),
    ],
)
def test_a_bad_line_is_named_and_exits_2(bothost, tmp_path, line, why):
    events = tmp_path / "bad.jsonl"
    events.write_text(ELEVEN.read_text().splitlines()[0] + "\n" + line + "\n")
    result = bothost("tick", "--dry-run", "--events", str(events), code=2)
    assert why in result.stderr and "--events" in result.stderr


def test_replay_options_need_dry_run_and_now_needs_an_offset(bothost):
    assert "--dry-run" in bothost("tick", "--events", str(ELEVEN), code=2).stderr
    bad = bothost("tick", "--dry-run", "--now", "2026-12-06T18:11", code=2)
    assert "UTC offset" in bad.stderr
