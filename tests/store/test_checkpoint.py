"""WAL checkpoints of the SQLite store run on a thread of their own, not inside the store
thread's commits (issue 19: a burst's batches waited out their copying and fsyncs)."""

from __future__ import annotations

import threading
import time

from bothost.store import Migration, Store, core_migrations, sql

NOTES = "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"
ROWS = 2000  # of 1 kB: 2 MB in the WAL, under SQLite's own 1,000-page trigger


def wait_for(condition, bound: float = 5.0) -> bool:
    deadline = time.monotonic() + bound
    while not condition():
        if time.monotonic() > deadline:
            return False
        threading.Event().wait(0.01)  # a poll interval, not a wait for something to happen
    return True


def test_the_wal_is_checkpointed_by_its_own_thread_not_the_store_thread(tmp_path):
    path = tmp_path / "bothost.db"
    store = Store(path, [*core_migrations(), Migration("notes", 1, sql(NOTES))])
    try:
        before = path.stat().st_size
        store.call(
            lambda db: db.execute(
                "INSERT INTO notes (body) VALUES " + ", ".join(["(?)"] * ROWS),
                ["x" * 1000] * ROWS,
            )
        )
        # the rows reach the database file itself: a checkpoint ran, though the store's
        # connection never runs one
        assert wait_for(lambda: path.stat().st_size > before + ROWS * 1000)
        assert store.call(lambda db: db.value("PRAGMA wal_autocheckpoint")) == 0
        assert "bothost-checkpoint" in {t.name for t in threading.enumerate()}
    finally:
        store.close()
    assert "bothost-checkpoint" not in {t.name for t in threading.enumerate()}
    # closed cleanly: every row is there when the file opens again
    again = Store(path, [*core_migrations(), Migration("notes", 1, sql(NOTES))])
    try:
        assert again.call(lambda db: db.value("SELECT count(*) FROM notes")) == ROWS
    finally:
        again.close()
