"""The SQLite backend: one file in the home, WAL, ``busy_timeout``, checked before use.

Opening refuses a directory, a file that is not SQLite or is corrupt, a read-only file and
a database written by a newer bothost before anything is written; then it migrates.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bothost.store.conn import SQLITE, Conn, SqliteConn
from bothost.store.errors import StoreError
from bothost.store.health import MIN_FREE_BYTES, WriteHealth, free_bytes, probe
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
            raw.execute("PRAGMA foreign_keys = ON")
            conn = SqliteConn(raw)
            self.applied = apply_migrations(conn, migrations)
            record_version(raw, migrations)
        except BaseException:
            raw.close()
            raise
        return conn

    def reopen(self, conn: Conn) -> Conn:
        return conn

    def probe(self, conn: Conn) -> dict[str, Any]:
        return probe(conn, self.path, self.health)

    def close(self, conn: Conn) -> None:
        assert isinstance(conn, SqliteConn)
        conn.raw.close()

    def explain(self, exc: BaseException) -> str:
        if not isinstance(exc, sqlite3.Error):
            return str(exc)
        name = getattr(exc, "sqlite_errorname", "")
        if name == "SQLITE_FULL" or name.startswith("SQLITE_IOERR"):
            # a full disk fails the open as "disk I/O error" (the -shm file cannot grow),
            # which read as a damaged file; the file is fine, the disk is not
            free = free_bytes(self.path.parent)
            if free is not None and free < MIN_FREE_BYTES:
                return (
                    f"the disk is full ({free} bytes free on {self.path.parent}); free some "
                    "space and try again (the database is kept as it is)"
                )
        return explain(exc)
