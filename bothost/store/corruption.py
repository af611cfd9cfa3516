"""A damaged SQLite file: found before the host serves, and never used again once met.

Damage inside the file (a bad disk, a stray write over a page) leaves the header intact, so
opening and most queries work; only reading a damaged page fails, with SQLite's
``SQLITE_CORRUPT`` ("database disk image is malformed") or ``SQLITE_NOTADB``. Two defences:

* At open, :func:`check_file` runs ``PRAGMA quick_check(1)`` on a connection of its own,
  stopped at a time budget. It reads every page, so it is O(size of the file): measured
  (``bench/store_check.py``) at ~1.5 ms per MB on a warm file. ``bothost run`` gives it
  :data:`START_CHECK_SECONDS` (a host then serves for days), every other command
  :data:`OPEN_CHECK_SECONDS`; a file too large to finish within the budget is opened
  unchecked past that point, and the runtime defence covers the rest. A bounded walk of
  the roots and first pages was cheaper still but misses exactly the damage seen in issue
  34, pages in the middle of a large table.
* At run time, the first statement that meets the damage latches the store corrupt
  (:class:`~bothost.store.health.WriteHealth`): ``/healthz`` says so with 503 until the
  process restarts, and every later job gets a :class:`RefusedConn`, whose statements
  raise :class:`StoreCorruptError` — writing on into a damaged b-tree can spread the damage.

Only SQLite's errors are classified: PostgreSQL checks its own pages, and its errors keep
their meaning (:func:`bothost.store.health.postgres_unavailable`).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from bothost.store.conn import Conn, Params, Rows
from bothost.store.errors import StoreCorruptError

# SQLite primary result codes (the low byte of an extended code) that mean the file is damaged
CORRUPTION_CODES = {11: "SQLITE_CORRUPT", 26: "SQLITE_NOTADB"}
# what sqlite3 says for them, for an exception that carries no code (an older Python)
CORRUPTION_TEXTS = ("database disk image is malformed", "file is not a database")
OPEN_CHECK_SECONDS = 0.5  # a command's open: a whole file of ~300 MB (warm) is checked in it
START_CHECK_SECONDS = 5.0  # `bothost run`: files of ~3 GB; a start is rare and serves for days
MAX_REASON = 300  # characters of SQLite's report kept in the one line
FIX = (
    "`bothost doctor` shows the damage; restore a backup (move the file away, then "
    "`bothost db import DUMP` of a `bothost db export` dump), or move it away to start afresh"
)


def corruption(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it was raised from) says the SQLite file is damaged."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, StoreCorruptError):
            return True
        if isinstance(current, sqlite3.Error):
            code = getattr(current, "sqlite_errorcode", None)
            if code is not None:
                return (code & 0xFF) in CORRUPTION_CODES
            return any(text in str(current) for text in CORRUPTION_TEXTS)
        current = current.__cause__ or current.__context__
    return False


def is_corrupt(reason: str) -> str:
    """What SQLite said of the damage (one line of it), and the way out (after the file's
    name)."""
    return f"is corrupt ({' '.join(reason.split())[:MAX_REASON]}); {FIX}"


def described(label: str, reason: str) -> str:
    """The one line that names the damaged file, what SQLite said, and the way out."""
    return f"{label}: {is_corrupt(reason)}"


@dataclass
class FileCheck:
    problem: str | None  # the first problem quick_check found; None when it found none
    finished: bool  # False: stopped at the budget, the rest of the file unchecked
    seconds: float


def check_file(path: Path, within: float) -> FileCheck:
    """``PRAGMA quick_check(1)`` of ``path`` for at most ``within`` seconds, on a read-only
    connection of its own (the store's connection keeps no page of it in its cache)."""
    start = time.monotonic()
    if within <= 0:
        return FileCheck(None, False, 0.0)
    conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=within)
    # sqlite3_interrupt from a timer: the b-tree walk never calls a progress handler
    guard = threading.Lock()
    live = [True]

    def stop() -> None:
        with guard:
            if live[0]:
                conn.interrupt()

    timer = threading.Timer(within, stop)
    timer.daemon = True
    timer.start()
    try:
        rows = [row[0] for row in conn.execute("PRAGMA quick_check(1)").fetchall()]
    except sqlite3.OperationalError as exc:
        if getattr(exc, "sqlite_errorname", "") == "SQLITE_INTERRUPT" or "interrupted" in str(exc):
            return FileCheck(None, False, time.monotonic() - start)
        if corruption(exc):
            return FileCheck(str(exc), True, time.monotonic() - start)
        return FileCheck(None, False, time.monotonic() - start)  # busy: the store will say
    except sqlite3.DatabaseError as exc:  # damage the check could not even walk past
        return FileCheck(str(exc), True, time.monotonic() - start)
    finally:
        timer.cancel()
        with guard:
            live[0] = False
            conn.close()
    if rows == ["ok"]:
        return FileCheck(None, True, time.monotonic() - start)
    # one line: SQLite starts a report with "*** in database main ***" and a newline
    text = " ".join(rows).replace("*** in database main ***", "").strip()
    return FileCheck(text or "quick_check failed", True, time.monotonic() - start)


class RefusedConn(Conn):
    """The connection a job gets once the store is known corrupt: every statement raises
    :class:`StoreCorruptError`, so the job fails as a store failure (a 503, a command's one
    line) and nothing more is written into the damaged file."""

    def __init__(self, real: Conn, message: str) -> None:
        self.dialect, self.ids, self.texts = real.dialect, real.ids, real.texts
        self.message = message
        self._real = real
        self.announcements = real.announcements

    def refuse(self) -> NoReturn:
        raise StoreCorruptError(self.message)

    def execute(self, sql: str, params: Params = ()) -> Rows:
        self.refuse()

    def executemany(self, sql: str, seq: Sequence[Params]) -> int:
        self.refuse()

    def pages(self, sql: str, size: int) -> Iterator[Rows]:
        self.refuse()

    def transaction(self) -> Any:
        self.refuse()

    def script(self, sql: str) -> None:
        self.refuse()

    def table_names(self) -> list[str]:
        self.refuse()

    @property
    def in_transaction(self) -> bool:
        return False

    @property
    def changes(self) -> int:
        return self._real.changes
