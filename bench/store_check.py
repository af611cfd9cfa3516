"""What a check of the whole SQLite file costs at open, by size: the figures behind
``bothost.store.corruption``'s budgets.

Builds a database of N events (the core ``events`` table and its two indexes, payloads of
the size a flooding MCP server sent in issue 34: 2,000,000 rows are ~480 MB), checkpoints
it, and times on the warm file (the OS page cache holds it, as after any recent use):

- ``PRAGMA quick_check(1)``: every page of every b-tree read and its cells checked, rows'
  NOT NULL columns too, the first problem reported (what the open runs);
- ``PRAGMA integrity_check``: the same and every index matched against its table;
- ``SELECT count(*)`` per b-tree: every page read, nothing checked (the cheapest walk that
  still touches a page in the middle);
- the open's own bounded check (:func:`bothost.store.corruption.check_file`) at its two
  budgets: finished, or stopped at the budget.

Run: .venv/bin/python bench/store_check.py [--rows N] [--db PATH] (the file is kept for a
second run; delete it after).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bothost.store.corruption import OPEN_CHECK_SECONDS, START_CHECK_SECONDS, check_file

EVENTS = """
CREATE TABLE events (
    id INTEGER PRIMARY KEY, source TEXT NOT NULL, type TEXT NOT NULL, payload TEXT NOT NULL,
    received_at REAL NOT NULL, dedupe_key TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0, claimed_until REAL, snoozed_until REAL,
    briefing_id INTEGER, priority TEXT, last_error TEXT
);
CREATE INDEX events_status ON events (status, id);
CREATE INDEX events_dedupe ON events (dedupe_key, received_at);
"""
BATCH = 100_000


def build(path: Path, rows: int) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(EVENTS)
    now = time.time()
    for start in range(0, rows, BATCH):
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO events (source, type, payload, received_at, dedupe_key)"
            " VALUES ('mcp:flood', ?, ?, ?, ?)",
            (
                (
                    f"event/x{i}",
                    json.dumps({"n": i, "text": "x" * 60}),
                    now + i,
                    os.urandom(12).hex(),
                )
                for i in range(start, min(rows, start + BATCH))
            ),
        )
        conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def timed(conn: sqlite3.Connection, sql: str) -> tuple[float, object]:
    start = time.perf_counter()
    result = conn.execute(sql).fetchall()
    return time.perf_counter() - start, result[0][0] if result else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--db", type=Path, default=Path("/tmp/bothost-bench-check.db"))
    args = parser.parse_args()
    if not args.db.exists():
        build(args.db, args.rows)
    size = args.db.stat().st_size
    print(f"{args.db}: {size / 1e6:.0f} MB")
    conn = sqlite3.connect(args.db)
    conn.execute("SELECT count(*) FROM events NOT INDEXED").fetchall()  # warm the page cache
    for sql in (
        "PRAGMA quick_check(1)",
        "PRAGMA integrity_check",
        "SELECT count(*) FROM events NOT INDEXED",
        "SELECT count(*) FROM events INDEXED BY events_status",
        "SELECT count(*) FROM events INDEXED BY events_dedupe",
    ):
        seconds, first = timed(conn, sql)
        print(f"{seconds * 1000:8.0f} ms  {sql}  ({first}; {seconds * 1e9 / size:.2f} ns/byte)")
    conn.close()
    for budget in (OPEN_CHECK_SECONDS, START_CHECK_SECONDS):
        start = time.perf_counter()
        outcome = check_file(args.db, budget)
        took = time.perf_counter() - start
        print(f"{took * 1000:8.0f} ms  check_file within {budget:g} s: {outcome}")


if __name__ == "__main__":
    main()
