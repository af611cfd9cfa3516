"""The SQLite backend: one file in the home, WAL, ``busy_timeout``, checked before use.

Opening refuses a directory, a file that is not SQLite or is corrupt (a time-bounded
``PRAGMA quick_check``: :mod:`bothost.store.corruption`), a read-only file and a database
written by a newer bothost before anything is written; then it migrates.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bothost.store.conn import SQLITE, Conn, SqliteConn
from bothost.store.corruption import OPEN_CHECK_SECONDS, check_file, is_corrupt
from bothost.store.errors import StoreCorruptError, StoreError
from bothost.store.health import MIN_FREE_BYTES, WriteHealth, free_bytes, probe
from bothost.store.migrations import Migration, apply_migrations, pending
from bothost.store.version import check_writable, explain, record_version, refuse_newer

BUSY_TIMEOUT_MS = 10_000  # another process may hold the write lock through a whole tick batch
logger = logging.getLogger(__name__)


def busy_timeout_ms(lock_wait: float | None) -> int:
    """The busy timeout for a wait on another process's lock that may last ``lock_wait``
    seconds at most (None: the store's own, :data:`BUSY_TIMEOUT_MS`)."""
    if lock_wait is None:
        return BUSY_TIMEOUT_MS
    return max(0, min(BUSY_TIMEOUT_MS, int(lock_wait * 1000)))


class SqliteBackend:
    dialect = SQLITE

    def __init__(
        self, path: Path, read_only: bool = False, check_within: float = OPEN_CHECK_SECONDS
    ) -> None:
        self.path = path
        self.read_only = read_only  # a command that only reads, on a home it cannot write
        self.check_within = check_within  # seconds the open's quick_check may take
        self.label = str(path)
        self.health = WriteHealth(self.label)
        self.applied: list[str] = []  # the migrations this open applied

    def open(self, migrations: Iterable[Migration], lock_wait: float | None = None) -> SqliteConn:
        """The connection, migrated; ``lock_wait`` bounds its waits on another process's
        lock (seconds; None: :data:`BUSY_TIMEOUT_MS`)."""
        migrations = list(migrations)
        if self.path.is_dir():
            raise StoreError("is a directory, not a database; move it away")
        if self.read_only:
            return self.open_read_only(migrations, lock_wait)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.path.exists()
        raw = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            if fresh:
                self.path.chmod(0o600)
            raw.execute(f"PRAGMA busy_timeout = {busy_timeout_ms(lock_wait)}")
            refuse_newer(raw, migrations)  # before anything that could write
            if not fresh:
                self.check_pages()
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

    def check_pages(self) -> None:
        """Refuse a file with damaged pages (:func:`check_file`, within the budget)."""
        checked = check_file(self.path, self.check_within)
        if checked.problem is not None:
            raise StoreCorruptError(is_corrupt(checked.problem))  # Store adds the file
        if not checked.finished and self.check_within > 0:
            logger.info(
                "%s: quick_check stopped after %.1f s (the file is large); damage past that"
                " is found when it is read",
                self.label,
                checked.seconds,
            )

    def open_read_only(
        self, migrations: list[Migration], lock_wait: float | None = None
    ) -> SqliteConn:
        """The file opened for reading only: nothing created, migrated or recorded.

        ``mode=ro`` first: it reads a running host's WAL through the -shm file, which it
        must be able to open or create; on a read-only mount with no -shm left (a clean
        close removes it) that fails, and ``immutable=1`` reads the file as it is, without
        locks — sound there, since nothing can write through that mount. A database that
        still needs a migration is refused: its tables are not what the command reads."""
        if not self.path.exists():
            raise StoreError("no database here yet (a read-only home cannot create one)")
        uri = self.path.absolute().as_uri()
        raw = None
        for mode in ("mode=ro", "immutable=1"):
            raw = sqlite3.connect(
                f"{uri}?{mode}", uri=True, isolation_level=None, check_same_thread=False
            )
            try:
                raw.execute("SELECT count(*) FROM sqlite_master").fetchone()
                break
            except sqlite3.OperationalError:
                raw.close()
                raw = None
        if raw is None:
            raise StoreError("cannot be read (not even as an unchanging file)")
        try:
            raw.execute(f"PRAGMA busy_timeout = {busy_timeout_ms(lock_wait)}")
            refuse_newer(raw, migrations)
            conn = SqliteConn(raw)
            waiting = pending(conn, migrations)
            if waiting:
                raise StoreError(
                    f"needs {len(waiting)} migration(s) before it can be read, and the home "
                    "is read-only: run a bothost command on a writable copy first"
                )
        except BaseException:
            raw.close()
            raise
        return conn

    def reopen(self, conn: Conn) -> Conn:
        return conn

    def limit_lock_wait(self, conn: Conn, lock_wait: float) -> None:
        """From now on, a statement waits on another process's lock ``lock_wait`` s at most."""
        assert isinstance(conn, SqliteConn)
        conn.raw.execute(f"PRAGMA busy_timeout = {busy_timeout_ms(lock_wait)}")

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
