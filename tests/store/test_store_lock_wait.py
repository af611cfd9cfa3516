"""A store given a budget (``lock_wait``) waits on another process's lock no longer than it.

Found by reading bothost/cli/runtime.py: ``events push --wait N`` opened the database again
while it was locked, each open (and each write after it) waiting out SQLite's own 10 s busy
timeout, so an open begun just before the N seconds ran out ended up to 10 s past them.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bothost.store import Store

HOLD = (
    "import sqlite3, sys\n"
    "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "db.execute('BEGIN IMMEDIATE')\n"
    "print('held', flush=True)\n"
    "sys.stdin.read()\n"
)


@contextmanager
def held_by_another_process(path: Path) -> Iterator[None]:
    """The database's write lock, held by another process until the block ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline() == "held\n"
        yield
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()


def busy_timeout(store: Store) -> int:
    return store.call(lambda db: db.execute("PRAGMA busy_timeout").fetchone()[0])


def test_each_wait_on_the_lock_ends_with_the_stores_budget(tmp_path):
    path = tmp_path / "bothost.db"
    clock = [1000.0]
    store = Store(path, lock_wait=2.5, clock=lambda: clock[0])
    try:
        assert busy_timeout(store) == 2500  # before: 10000, SQLite's own
        clock[0] += 2.0
        assert busy_timeout(store) == 500  # a later job gets what is left
        clock[0] += 5.0
        assert busy_timeout(store) == 0  # spent: no wait at all
        with held_by_another_process(path):
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                store.call(lambda db: db.execute("CREATE TABLE t (x)"))
    finally:
        store.close()


def test_a_store_without_a_budget_keeps_the_busy_timeout(tmp_path):
    clock = [1000.0]
    store = Store(tmp_path / "bothost.db", clock=lambda: clock[0])
    try:
        clock[0] += 3600
        assert busy_timeout(store) == 10_000
    finally:
        store.close()
