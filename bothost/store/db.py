"""The store: the process's one SQLite connection, owned by one writer thread.

Opening refuses, with one line naming the file, what this build must not use: a directory,
a file that is not SQLite or is corrupt, a read-only file, and a database written by a newer
bothost (see :mod:`bothost.store.version`) — before anything is written or migrated.

Every read and write runs on that thread (``await store.run(fn)`` from async code,
``store.call(fn)`` from sync code), so the event loop never waits on disk and there is
exactly one writer per process. Other processes (a running host and a CLI command) share the
file safely through WAL mode and ``busy_timeout``.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from pathlib import Path
from queue import SimpleQueue
from typing import Any, TypeVar

import sqlite_utils

from bothost.store.errors import StoreError
from bothost.store.health import WriteHealth
from bothost.store.migrations import Migration, apply_migrations
from bothost.store.version import check_writable, explain, record_version, refuse_newer

logger = logging.getLogger(__name__)
T = TypeVar("T")

BUSY_TIMEOUT_MS = 10_000  # another process may hold the write lock through a whole tick batch


class Store:
    """The process's SQLite database behind a single worker thread."""

    def __init__(self, path: Path | str, migrations: Iterable[Migration] = ()) -> None:
        self.path = Path(path)
        self._jobs: SimpleQueue[tuple[Callable[[sqlite_utils.Database], Any], Future] | None]
        self._jobs = SimpleQueue()
        self._thread = threading.Thread(target=self._work, name="bothost-store", daemon=True)
        self._ready: Future[None] = Future()
        self._migrations = list(migrations)
        self.health = WriteHealth()  # every job's write outcome, for /healthz
        self._thread.start()
        try:
            self._ready.result()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {explain(exc)}") from exc
        except Exception as exc:
            raise StoreError(f"{self.path}: {exc}") from exc

    def _open(self) -> sqlite_utils.Database:
        if self.path.is_dir():
            raise StoreError("is a directory, not a database; move it away")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.path.exists()
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            if fresh:
                self.path.chmod(0o600)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            refuse_newer(conn, self._migrations)  # before anything that could write
            check_writable(conn)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            db = sqlite_utils.Database(conn)
            apply_migrations(db, self._migrations)
            record_version(conn, self._migrations)
        except BaseException:
            conn.close()
            raise
        return db

    def _work(self) -> None:
        try:
            db = self._open()
        except Exception as exc:
            self._ready.set_exception(exc)
            return
        self._ready.set_result(None)
        while (job := self._jobs.get()) is not None:
            fn, future = job
            if not future.set_running_or_notify_cancel():
                continue
            before = db.conn.total_changes
            try:
                future.set_result(fn(db))
                self.health.observe(db.conn.total_changes != before, None)
            except BaseException as exc:  # handed to the caller, who decides
                self.health.observe(False, exc)
                future.set_exception(exc)
        db.conn.close()

    def submit(self, fn: Callable[[sqlite_utils.Database], T]) -> Future[T]:
        future: Future[T] = Future()
        self._jobs.put((fn, future))
        return future

    def call(self, fn: Callable[[sqlite_utils.Database], T]) -> T:
        """Run ``fn(db)`` on the store thread and wait (sync callers, CLI commands)."""
        return self.submit(fn).result()

    async def run(self, fn: Callable[[sqlite_utils.Database], T]) -> T:
        """Run ``fn(db)`` on the store thread without blocking the event loop."""
        return await asyncio.wrap_future(self.submit(fn))

    def close(self) -> None:
        if self._thread.is_alive():
            self._jobs.put(None)
            self._thread.join(timeout=10)


def transaction(db: sqlite_utils.Database) -> Any:
    """``with transaction(db):`` — BEGIN IMMEDIATE so writers queue instead of failing late."""
    return _Transaction(db.conn)


class _Transaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.conn.execute("COMMIT")
        elif self.conn.in_transaction:  # SQLite may have rolled back already (disk full, I/O)
            self.conn.execute("ROLLBACK")
