"""The SQLite backend: one file in the home, WAL, ``busy_timeout``, checked before use.

WAL checkpoints run on a thread of their own (:mod:`bothost.store.checkpoint`), not inside
the writer's commits; the writer checkpoints only to start a WAL past its bound over.

Opening refuses a directory, a file that is not SQLite or is corrupt, a read-only file and
a database written by a newer bothost before anything is written; then it migrates.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bothost.store.checkpoint import WAL_HURRY_BYTES, Checkpointer, WalBound, wal_bytes
from bothost.store.conn import SQLITE, Conn, SqliteConn
from bothost.store.errors import StoreError
from bothost.store.health import WriteHealth, probe
from bothost.store.migrations import Migration, apply_migrations
from bothost.store.version import check_writable, explain, record_version, refuse_newer

BUSY_TIMEOUT_MS = 10_000  # another process may hold the write lock through a whole tick batch


class SqliteBackend:
    dialect = SQLITE

    def __init__(self, path: Path) -> None:
        self.path = path
        self.label = str(path)
        self.health = WriteHealth()
        self.applied: list[str] = []  # the migrations this open applied
        self.checkpointer: Checkpointer | None = None
        self.wal_bound = WalBound(path)

    def open(self, migrations: Iterable[Migration]) -> SqliteConn:
        migrations = list(migrations)
        if self.path.is_dir():
            raise StoreError("is a directory, not a database; move it away")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.path.exists()
        raw = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            if fresh:
                self.path.chmod(0o600)
            raw.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            refuse_newer(raw, migrations)  # before anything that could write
            check_writable(raw)
            raw.execute("PRAGMA journal_mode = WAL")
            raw.execute("PRAGMA synchronous = NORMAL")
            raw.execute("PRAGMA wal_autocheckpoint = 0")  # the Checkpointer's thread runs them
            raw.execute(f"PRAGMA journal_size_limit = {WAL_HURRY_BYTES}")  # space given back
            raw.execute("PRAGMA foreign_keys = ON")
            conn = SqliteConn(raw)
            self.applied = apply_migrations(conn, migrations)
            record_version(raw, migrations)
        except BaseException:
            raw.close()
            raise
        self.checkpointer = Checkpointer(self.path)
        return conn

    def wrote(self, conn: Conn) -> None:
        """A job committed a write (store thread): its pages are the checkpointer's now,
        unless the WAL is past its bound (then the writer starts it over)."""
        assert isinstance(conn, SqliteConn)
        size = wal_bytes(self.path)
        if self.checkpointer is not None:
            self.checkpointer.wrote(size)
        self.wal_bound.wrote(conn.raw, size)

    def reopen(self, conn: Conn) -> Conn:
        return conn

    def probe(self, conn: Conn) -> dict[str, Any]:
        report = probe(conn, self.path, self.health)
        report["wal_bytes"] = wal_bytes(self.path)
        if self.wal_bound.stuck is not None:  # writes still work: a detail, not a failure
            report["wal"] = f"cannot be reset: {self.wal_bound.stuck}"
        return report

    def close(self, conn: Conn) -> None:
        assert isinstance(conn, SqliteConn)
        if self.checkpointer is not None:
            self.checkpointer.stop()
        conn.raw.close()  # the last connection: SQLite checkpoints the rest and drops the WAL

    def explain(self, exc: BaseException) -> str:
        return explain(exc) if isinstance(exc, sqlite3.Error) else str(exc)
