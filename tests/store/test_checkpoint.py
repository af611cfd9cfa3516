"""WAL checkpoints of the SQLite store run on a thread of their own, not inside the store
thread's commits (issue 19: a burst's batches waited out their copying and fsyncs)."""

from __future__ import annotations

import sqlite3
import threading
import time

from bothost.store import Migration, Store, checkpoint, core_migrations, sql
from bothost.store import sqlite as sqlite_backend

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


def racing_write(path):
    """A job writing one row in a transaction that began before a checkpoint pass and ends
    after it, as the store thread's commits do while the checkpoint thread runs (the writer
    never waits for it): the pass copies what was committed before, not this row's frames."""

    def job(db) -> None:
        with db.transaction():
            db.execute("INSERT INTO notes (body) VALUES (?)", ["x" * 8000])
            other = sqlite3.connect(path)
            try:
                other.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            finally:
                other.close()

    return job


def test_the_wal_starts_over_though_every_commit_races_a_checkpoint(tmp_path, monkeypatch):
    # issue 19: after a full disk, /healthz stayed 503: SQLite starts the WAL over only when a
    # write transaction starts after a checkpoint copied every frame, and with the checkpoints
    # on their own thread a commit raced nearly every one, so the WAL grew by every write (and
    # the checkpoints grew the database too) until the freed space was gone again
    monkeypatch.setattr(checkpoint, "WAL_BOUND_BYTES", 256 * 1024)
    monkeypatch.setattr(sqlite_backend, "WAL_HURRY_BYTES", 128 * 1024)  # journal_size_limit
    path = tmp_path / "bothost.db"
    store = Store(path, [*core_migrations(), Migration("notes", 1, sql(NOTES))])
    try:
        store.backend.checkpointer.stop()  # only the passes the writes race, deterministic
        store.call(racing_write(path))  # the migrations' WAL: past the bound, cut back
        largest = 0
        for _ in range(199):  # 1.6 MB of rows, six times the bound
            store.call(racing_write(path))
            largest = max(largest, checkpoint.wal_bytes(path))
        # past the bound the writer copied the rest itself, so its next write started the WAL
        # over: the file never grew past the bound and a write's frames
        assert largest < 256 * 1024 + 64 * 1024
        assert store.backend.wal_bound.checkpoints >= 1
        assert store.backend.wal_bound.stuck is None
    finally:
        store.close()
    again = Store(path, [*core_migrations(), Migration("notes", 1, sql(NOTES))])
    try:
        assert again.call(lambda db: db.value("SELECT count(*) FROM notes")) == 200
    finally:
        again.close()
