"""Whether the store can write: the last write's outcome, and a cheap probe.

A query that answers says little: with the disk full SQLite still reads (and even writes
while the WAL has room), and a corrupt file is hidden by the writer's page cache until a
page is read from disk again. So the store's worker thread records the outcome of every
job that wrote or failed with a storage error (:meth:`WriteHealth.observe`), and
:func:`probe` adds what no job may have tried yet: free space on the database's file
system, the file read through a fresh connection (no cache), and — while failing — one
real write, so recovery shows without waiting for traffic.

Callers use :func:`storage_failure` to tell "the store cannot write now" (answer 503 with
``Retry-After``, retry later) from a bug (a 500 and a traceback).

A failure that says the file is damaged (:func:`bothost.store.corruption.corruption`)
latches: a later successful write elsewhere in the file proves nothing about the damaged
pages, so the report stays not ok, ``corrupt`` and naming the file until the process ends.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bothost.store.corruption import FIX, corruption
from bothost.store.errors import StoreCorruptError

logger = logging.getLogger(__name__)

MIN_FREE_BYTES = 1024 * 1024  # below this a burst of events (and the WAL) cannot fit
RETRY_AFTER = 30  # seconds a refused sender waits: long enough to free space, short of a drop
PROBE_TIMEOUT_MS = 2_000  # the fresh connection waits this long for a lock, not the writer's 10 s

# SQLite primary result codes (the low byte of an extended code) meaning "the store cannot
# do its job now": not a bug in the statement, and retrying later can succeed
STORAGE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS}  # the file system's
STORAGE_CODES = {
    5: "SQLITE_BUSY",
    6: "SQLITE_LOCKED",
    7: "SQLITE_NOMEM",
    8: "SQLITE_READONLY",
    10: "SQLITE_IOERR",
    11: "SQLITE_CORRUPT",
    13: "SQLITE_FULL",
    14: "SQLITE_CANTOPEN",
    15: "SQLITE_PROTOCOL",
    26: "SQLITE_NOTADB",
}


def storage_failure(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it was raised from) says the store cannot write now."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, StoreCorruptError):  # a corrupt store's refusal
            return True
        if isinstance(current, sqlite3.Error):
            code = getattr(current, "sqlite_errorcode", None)
            if code is not None:
                return (code & 0xFF) in STORAGE_CODES
            # no code (an older Python): classify by class, as sqlite3 itself does
            return type(current) in (sqlite3.OperationalError, sqlite3.DatabaseError)
        if isinstance(current, OSError) and current.errno in STORAGE_ERRNOS:
            return True
        if postgres_unavailable(current):
            return True
        current = current.__cause__ or current.__context__
    return False


# SQLSTATE classes meaning "PostgreSQL cannot do its job now": connection exception,
# insufficient resources (disk full, out of memory), operator intervention (shutdown),
# system error. Anything else (a constraint, bad SQL) is the statement's fault.
POSTGRES_STORAGE_CLASSES = ("08", "53", "57", "58")


def postgres_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` is psycopg's word that the server is unreachable or out of room."""
    module = type(exc).__module__ or ""
    if not module.startswith("psycopg"):
        return False
    import psycopg

    if isinstance(exc, psycopg.OperationalError) and not getattr(exc, "sqlstate", None):
        return True  # no server answer at all: the connection is gone
    state = getattr(exc, "sqlstate", None) or ""
    return state[:2] in POSTGRES_STORAGE_CLASSES


@dataclass
class Failure:
    at: float
    reason: str


class WriteHealth:
    """The outcome of the store's writes, recorded on its thread, read from any thread;
    ``label``: the database it watches (a SQLite file's path), named when it is corrupt."""

    def __init__(self, label: str = "") -> None:
        self.label = label
        self._lock = threading.Lock()
        self.failure: Failure | None = None  # since the last successful write
        self.corrupt: Failure | None = None  # the first corruption met; never cleared
        self.last_write: float | None = None

    def observe(self, changed: bool, exc: BaseException | None) -> None:
        """One job's outcome: ``changed`` when it wrote rows, ``exc`` when it raised."""
        if exc is not None:
            if storage_failure(exc):
                failure = Failure(time.time(), one_line(exc))
                with self._lock:
                    self.failure = failure
                    latched = self.corrupt is None and corruption(exc)
                    if latched:
                        self.corrupt = failure
                if latched:  # once: the log's one line for it, with the way out
                    logger.error(
                        "%s: is corrupt (%s); every statement is refused until a restart; %s",
                        self.label or "the database",
                        failure.reason,
                        FIX,
                    )
        elif changed:
            with self._lock:
                self.failure = None
                self.last_write = time.time()

    def report(self) -> dict[str, Any]:
        with self._lock:
            failure, last, corrupt = self.failure, self.last_write, self.corrupt
        failure = corrupt or failure
        out: dict[str, Any] = {"ok": failure is None, "last_write": last}
        if failure is not None:
            out.update(error=failure.reason, failing_since=failure.at)
        if corrupt is not None:
            out.update(corrupt=True, file=self.label, fix=FIX)
        return out


def probe(conn: Any, path: Path, health: WriteHealth) -> dict[str, Any]:
    """Check the SQLite store now; runs on the store thread (it may write). Never raises."""
    problems = []
    free = free_bytes(path.parent)
    if free is not None and free < MIN_FREE_BYTES:
        problems.append(f"disk full: {free} bytes free on {path.parent}")
    try:
        read_fresh(path)
    except sqlite3.Error as exc:
        if corruption(exc):  # a damaged header latches as any corruption does
            health.observe(False, exc)
        problems.append(f"database unreadable: {one_line(exc)}")
    if health.failure is not None and health.corrupt is None and not problems:
        write_again(conn, health)  # never into a damaged file
    report = health.report()
    if problems:
        report["ok"] = False
        report["error"] = "; ".join(problems + ([report["error"]] if "error" in report else []))
    if free is not None:
        report["free_bytes"] = free
    return report


def free_bytes(folder: Path) -> int | None:
    try:
        stats = os.statvfs(folder)
    except OSError:
        return None
    # root may use the blocks reserved for it, and a host running as root will
    blocks = stats.f_bfree if os.geteuid() == 0 else stats.f_bavail
    return blocks * stats.f_frsize


def read_fresh(path: Path) -> None:
    """Read the header and schema through a new connection, past any page cache."""
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=PROBE_TIMEOUT_MS / 1000)
    try:
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        conn.execute("SELECT COUNT(*) FROM events WHERE status = 'pending'").fetchone()
    finally:
        conn.close()


def write_again(conn: Any, health: WriteHealth) -> None:
    """A real write, the only proof that writing works again; recorded in ``health``."""
    try:
        before = conn.changes
        write_probe(conn)
        health.observe(conn.changes != before, None)
    except Exception as exc:  # the probe reports; it never breaks the health page
        health.observe(False, exc)


def write_probe(conn: Any) -> None:
    """Insert and delete one row in one transaction: pages change, nothing is left behind."""
    with conn.transaction():
        conn.execute(
            "INSERT INTO locks (name, owner, expires_at)"
            " VALUES ('bothost:health-probe', 'probe', 0)"
            " ON CONFLICT (name) DO UPDATE SET owner = excluded.owner"
        )
        conn.execute("DELETE FROM locks WHERE name = 'bothost:health-probe'")


def one_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]
