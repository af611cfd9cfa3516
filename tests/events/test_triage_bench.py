"""bench/triage: the labelled corpus, scored offline through the installed command line,
meets issue 36's bars with the shipped defaults alone."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).parents[2] / "bench" / "triage"
CORPUS = BENCH / "corpus.jsonl"


def test_the_committed_corpus_is_what_its_generator_writes():
    written = runpy.run_path(str(BENCH / "make_corpus.py"))["events"]
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == json.loads(json.dumps(written))
    assert len(lines) >= 200
    assert {e["expected"] for e in written} == {"urgent", "high", "normal", "low"}
    assert {e["source"] for e in written} >= {"gmail", "gcal", "ssh", "weather"}


def test_the_defaults_meet_the_bars_on_the_corpus(home):
    scored = subprocess.run(
        [sys.executable, str(BENCH / "score.py"), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert scored.returncode == 0, scored.stdout + scored.stderr
    found = json.loads(scored.stdout)
    assert found["events"] >= 200
    assert found["urgent_recall"] == 1.0
    assert found["high_recall"] >= 0.9
    assert found["low_folded"] >= 0.9


def test_low_events_are_never_listed_one_per_line(home):
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("bothost")),
            "tick",
            "--dry-run",
            "--events",
            str(CORPUS),
            "--now",
            "2026-12-07T08:00:00+01:00",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    low = {e["index"] for e in found["events"] if e["priority"] == "low"}
    shown = {i for item in found["briefing"]["items"] for i in item["events"]}
    assert len(low) > 50 and not low & shown
    assert low <= set(found["briefing"]["folded"])
