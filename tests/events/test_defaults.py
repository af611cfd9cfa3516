"""The shipped triage defaults: the bundled sources' events weighed without any config."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from bothost.config import TickRule
from bothost.events.render import build_briefing
from bothost.events.triage import QueuedEvent, Rulebook, triage_offline

ZURICH = ZoneInfo("Europe/Zurich")
NOW = datetime(2026, 12, 6, 18, 11, tzinfo=ZURICH).timestamp()
ELEVEN = Path(__file__).parent / "data" / "eleven_events.jsonl"


def eleven() -> list[QueuedEvent]:
    lines = ELEVEN.read_text().splitlines()
    return [
        QueuedEvent(i, e["source"], e["type"], e["payload"], NOW)
        for i, e in enumerate(map(json.loads, lines), 1)
    ]


def briefing_of(events: list[QueuedEvent], rules: Rulebook | None = None) -> str:
    triage = triage_offline(events, rules or Rulebook.build(), [], ZURICH, NOW)
    return build_briefing(
        triage.items,
        low_ids=triage.ids("low"),
        muted_ids=[],
        muted_summary="",
        low_summary=triage.low_summary,
        targets=["console:"],
        now=NOW,
        tz=ZURICH,
    ).text


def section(text: str, heading: str) -> list[str]:
    lines = text.splitlines()
    if heading not in lines:
        return []
    after = lines[lines.index(heading) + 1 :]
    return [
        line
        for line in after[
            : next((i for i, ln in enumerate(after) if not ln.startswith("•")), len(after))
        ]
    ]


def test_the_eleven_events_read_as_a_person_would_triage_them():
    text = briefing_of(eleven())

    urgent = section(text, "URGENT")
    assert len(urgent) == 2
    assert "Severe storm warning" in urgent[0] and "db-1 disk at 97%" in urgent[1]
    high = "\n".join(section(text, "HIGH"))
    assert "Contract needs your signature today" in high and "Board meeting moved" in high
    for folded in ("Deals Weekly", "The Batch", "LinkedIn"):
        assert folded not in text
    assert "+ 3 low: 1 promotion, 1 update, 1 social" in text
    assert "Cancelled: 1:1 with Sam" in "\n".join(section(text, "FYI"))  # it is over already


def test_a_calendar_change_a_week_away_is_normal():
    (board,) = [e for e in eleven() if e.payload.get("title") == "Board meeting"]
    board.payload["start"] = "2026-12-14T09:00:00+01:00"
    assert "Board meeting" in "\n".join(section(briefing_of([board]), "FYI"))


def test_an_alert_and_its_resolution_are_one_item():
    alert = eleven()[1]
    cleared = QueuedEvent(
        20,
        "ssh",
        "event/ssh_alert",
        {
            **alert.payload,
            "state": "resolved",
            "severity": "info",
            "summary": "db-1 disk ok",
            "occurred_at": "2026-12-06T17:40:00Z",
        },
        NOW,
    )
    text = briefing_of([alert, cleared])
    assert section(text, "URGENT") == ["• db-1 disk at 97% — resolved 18:40 (ssh alert, 18:11)"]
    assert "low" not in text


def test_a_resolution_alone_is_folded():
    alert = eleven()[1]
    cleared = QueuedEvent(20, "ssh", "event/ssh_alert", {**alert.payload, "state": "resolved"}, NOW)
    assert briefing_of([cleared]).splitlines()[-1].startswith("+ 1 low: 1 resolved")


def test_config_rules_come_before_the_defaults_and_defaults_can_be_removed():
    promo = eleven()[2]
    keep = Rulebook.build([TickRule({"payload.from": "*@deals.example"}, "high")])
    assert "Deals Weekly" in "\n".join(section(briefing_of([promo], keep), "HIGH"))
    gone = Rulebook.build(removed=["default:gmail-promotions"])
    assert "Deals Weekly" in "\n".join(section(briefing_of([promo], gone), "FYI"))
    assert "Deals Weekly" in briefing_of([promo], Rulebook.build(defaults=False))


def test_every_default_names_itself_in_the_decision():
    rules = Rulebook.build()
    decided = [
        rules.decide(e.source, e.type, e.payload, datetime.fromtimestamp(NOW, ZURICH))
        for e in eleven()
    ]
    assert decided[2] == ("low", "default:gmail-promotions")
    assert decided[4] == ("high", "default:gmail-important")
    assert decided[7] == ("high", "default:calendar-changed-soon")
    assert decided[0] == ("urgent", "default:severity-critical")


def test_events_list_names_the_low_events_the_fold_line_points_to(tmp_path):
    import subprocess
    import sys

    home = {"BOTHOST_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for event in map(json.loads, ELEVEN.read_text().splitlines()):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "bothost",
                "events",
                "push",
                event["source"],
                event["type"],
                json.dumps(event["payload"]),
            ],
            env=home,
            check=True,
            capture_output=True,
        )
    tick = subprocess.run(
        [sys.executable, "-m", "bothost", "tick"], env=home, capture_output=True, text=True
    )
    assert "+ 3 low: 1 promotion, 1 update, 1 social" in tick.stdout, tick.stdout + tick.stderr
    listed = subprocess.run(
        [sys.executable, "-m", "bothost", "events", "list", "--priority", "low", "--json"],
        env=home,
        capture_output=True,
        text=True,
        check=True,
    )
    assert sorted(e["payload"]["id"] for e in json.loads(listed.stdout)) == ["m1", "m2", "m5"]
