"""Scores the tick's triage on a labelled corpus, through the installed command line.

Runs ``bothost tick --dry-run --events CORPUS --json --now NOW`` (a subprocess, with
whatever config ``BOTHOST_HOME`` / ``BOTHOST_CONFIG`` name: no model configured means the
offline rules, a configured model means the tick agent) and compares each event's priority
with its ``expected`` label:

- urgent recall: expected urgent, judged urgent;
- high recall: expected high, judged high or urgent;
- low folded: expected low and not given a line of its own — judged low (folded into the
  briefing's low line, or held for the next one) or drop, or shown in the item of the alert
  it resolves;
- a confusion table, expected (rows) by judged (columns).

Usage: ``python bench/triage/score.py [--corpus FILE] [--now ISO8601] [--json]``; exit 1
when a bar of issue 36 is missed (urgent 1.0, high 0.9, low folded 0.9).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
CORPUS = HERE / "corpus.jsonl"
NOW = "2026-12-07T08:00:00+01:00"  # the corpus's Monday morning (make_corpus.py)
CLASSES = ("urgent", "high", "normal", "low", "drop")
BARS = {"urgent_recall": 1.0, "high_recall": 0.9, "low_folded": 0.9}


def bothost_command() -> list[str]:
    """The installed CLI: beside this Python first (a venv), else on PATH."""
    beside = Path(sys.executable).with_name("bothost")
    found = str(beside) if beside.exists() else shutil.which("bothost")
    if found is None:
        raise SystemExit("score.py: no `bothost` command found (pip install -e .)")
    return [found]


def dry_run(corpus: Path, now: str) -> dict[str, Any]:
    args = ["tick", "--dry-run", "--events", str(corpus), "--json", "--now", now]
    done = subprocess.run(bothost_command() + args, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"score.py: bothost exited {done.returncode}: {done.stderr.strip()}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def score(corpus: list[dict[str, Any]], result: dict[str, Any]) -> dict[str, Any]:
    labels = [event["expected"] for event in corpus]
    judged = [e["priority"] for e in result["events"]]
    briefing = result["briefing"] or {"items": []}
    # a resolution shown in its alert's item ("db-1 disk at 97% — resolved 06:40") is not a
    # line of its own: the tick gives it the alert's priority so both leave together
    paired = {
        i
        for item in briefing["items"]
        for i in item["events"]
        if resolves(corpus[i], [corpus[j] for j in item["events"] if j != i])
    }

    def share(hits: int, of: int) -> float:
        return round(hits / of, 3) if of else 1.0

    expected = {c: [i for i, label in enumerate(labels) if label == c] for c in CLASSES}
    listed = [i for i in expected["low"] if judged[i] not in ("low", "drop") and i not in paired]
    confusion = {c: {d: 0 for d in CLASSES} for c in CLASSES}
    for label, got in zip(labels, judged, strict=True):
        confusion[label][got] += 1
    urgent = sum(judged[i] == "urgent" for i in expected["urgent"])
    high = sum(judged[i] in ("urgent", "high") for i in expected["high"])
    return {
        "events": len(labels),
        "urgent_recall": share(urgent, len(expected["urgent"])),
        "high_recall": share(high, len(expected["high"])),
        "low_folded": share(len(expected["low"]) - len(listed), len(expected["low"])),
        "low_listed": listed,
        "missed": [
            {"index": i, "expected": label, "judged": judged[i]}
            for i, label in enumerate(labels)
            if label != judged[i] and i not in paired
        ],
        "confusion": confusion,
    }


def resolves(event: dict[str, Any], others: list[dict[str, Any]]) -> bool:
    """Whether ``event`` is the all-clear of an alert among ``others``."""
    payload = event["payload"]
    key = [payload.get(k) for k in ("alias", "check", "subject")]
    return payload.get("state") == "resolved" and any(
        o["payload"].get("state") == "alert"
        and [o["payload"].get(k) for k in ("alias", "check", "subject")] == key
        for o in others
    )


def report(found: dict[str, Any]) -> str:
    lines = [
        f"{found['events']} events",
        f"urgent recall      {found['urgent_recall']:.3f}  (bar {BARS['urgent_recall']})",
        f"high recall        {found['high_recall']:.3f}  (bar {BARS['high_recall']}; or urgent)",
        f"low kept folded    {found['low_folded']:.3f}  (bar {BARS['low_folded']})",
        "",
        "expected \\ judged " + "".join(f"{c:>8}" for c in CLASSES),
    ]
    for label in CLASSES:
        row = found["confusion"][label]
        if any(row.values()):
            lines.append(f"{label:<18}" + "".join(f"{row[c]:>8}" for c in CLASSES))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--now", default=NOW, help="the moment judged at (ISO 8601)")
    parser.add_argument("--json", action="store_true", help="the scores as one JSON object")
    args = parser.parse_args()
    lines = args.corpus.read_text(encoding="utf-8").splitlines()
    corpus = [json.loads(line) for line in lines if line.strip()]
    found = score(corpus, dry_run(args.corpus, args.now))
    print(json.dumps(found, indent=2) if args.json else report(found))
    return 0 if all(found[k] >= bar for k, bar in BARS.items()) else 1


if __name__ == "__main__":
    sys.exit(main())
