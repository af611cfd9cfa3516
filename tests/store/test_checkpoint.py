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
    # the thread's connection closed first, so the store's was the last: it copied the rest
    # into the file and removed the WAL (nothing left for the next open to recover)
    assert not checkpoint.wal_path(path).exists()
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


def plain_write(db) -> None:
    db.execute("INSERT INTO notes (body) VALUES (?)", ["x" * 8000])


def test_a_reader_holding_a_snapshot_is_named_and_the_wal_starts_over_when_it_ends(
    tmp_path, monkeypatch, caplog
):
    # a long read (a backup, another process) pins the frames after its snapshot: no
    # checkpoint can copy them, so the WAL grows; the host says so instead of growing quietly
    monkeypatch.setattr(checkpoint, "WAL_BOUND_BYTES", 256 * 1024)
    monkeypatch.setattr(sqlite_backend, "WAL_HURRY_BYTES", 128 * 1024)  # journal_size_limit
    path = tmp_path / "bothost.db"
    store = Store(path, [*core_migrations(), Migration("notes", 1, sql(NOTES))])
    reader = sqlite3.connect(path, isolation_level=None)
    try:
        store.backend.checkpointer.stop()  # the writer's bound alone, deterministic
        store.backend.wal_bound.clock = lambda: 0.0  # one warning per minute: this is one
        store.call(plain_write)  # the migrations' WAL: past the bound, cut back
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM notes").fetchone()  # holds this snapshot
        for _ in range(60):  # 480 kB of rows, past the bound
            store.call(plain_write)
        assert checkpoint.wal_bytes(path) > 256 * 1024
        report = store.call(store.probe)
        assert report["ok"] is True  # writes work: a detail, not a failure
        assert report["wal_bytes"] > 256 * 1024
        assert "held by a reader's older snapshot" in report["wal"]
        warnings = [r for r in caplog.records if "cannot be reset" in r.getMessage()]
        assert len(warnings) == 1, warnings

        reader.execute("ROLLBACK")  # the read ends
        store.call(plain_write)  # the writer copies the rest...
        store.call(plain_write)  # ...so this write starts the WAL over, the file cut back
        assert checkpoint.wal_bytes(path) <= 128 * 1024
        report = store.call(store.probe)
        assert "wal" not in report
    finally:
        reader.close()
        store.close()


class FullDisk:
    """A connection whose checkpoint fails as one on a full disk does."""

    def execute(self, sql):
        raise sqlite3.OperationalError("database or disk is full")


def test_a_failing_checkpoint_is_a_warning_a_minute_never_the_writes_failure(tmp_path, caplog):
    now = [0.0]
    bound = checkpoint.WalBound(tmp_path / "bothost.db", clock=lambda: now[0])
    past = checkpoint.WAL_BOUND_BYTES + 1
    for _ in range(3):
        bound.wrote(FullDisk(), past)  # never raises: the job has committed
    assert bound.stuck == "a checkpoint failed: database or disk is full"
    now[0] = checkpoint.WARN_EVERY
    bound.wrote(FullDisk(), past)
    warnings = [r.getMessage() for r in caplog.records if "cannot be reset" in r.getMessage()]
    assert len(warnings) == 2, warnings
    assert "database or disk is full" in warnings[0]
    bound.wrote(FullDisk(), checkpoint.WAL_BOUND_BYTES)  # under the bound again: nothing stuck
    assert bound.stuck is None
