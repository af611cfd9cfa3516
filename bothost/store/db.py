"""The store: the process's one database connection, owned by one worker thread.

The database is SQLite (a file, the default) or PostgreSQL (``store.url:
postgresql://…``, for several hosts on one database); :mod:`bothost.store.sqlite` and
:mod:`bothost.store.postgres` open them. Opening refuses, with one line naming the target
(the file, or the URL with its password masked), what this build must not use: a database
that cannot be reached or read, a read-only one, and one written by a newer bothost (see
:mod:`bothost.store.version`) — before anything is written or migrated.

Every read and write runs on the worker thread (``await store.run(fn)`` from async code,
``store.call(fn)`` from sync code) as a plain function of a :class:`~bothost.store.conn.Conn`,
so the event loop never waits on disk or network and there is exactly one connection and one
writer per process, on either backend. PostgreSQL is driven synchronously on that thread
rather than through psycopg's async pool: the same functions, ordering and batching then hold
on both backends, and one connection per process is plenty for a chat host whose writes are
batched (a pool of such threads can come later without changing a call site).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from pathlib import Path
from queue import SimpleQueue
from typing import Any, TypeVar

from bothost.store.conn import Conn
from bothost.store.corruption import OPEN_CHECK_SECONDS, RefusedConn, corruption, described
from bothost.store.errors import StoreBusyError, StoreCorruptError, StoreError, database_errors
from bothost.store.migrations import Migration
from bothost.store.postgres import PostgresBackend
from bothost.store.sqlite import SqliteBackend
from bothost.store.target import POSTGRES_SCHEMES

logger = logging.getLogger(__name__)
T = TypeVar("T")


def is_postgres(target: Path | str) -> bool:
    return isinstance(target, str) and target.startswith(POSTGRES_SCHEMES)


def open_backend(
    target: Path | str, read_only: bool = False, check_within: float = OPEN_CHECK_SECONDS
) -> Any:
    """The backend for ``target``: a ``postgresql://`` URL, or a SQLite file's path
    (``read_only``: opened for reading only, see ``SqliteBackend.open_read_only``;
    ``check_within``: seconds its pages may be checked at open)."""
    if is_postgres(target):
        return PostgresBackend(str(target))
    return SqliteBackend(Path(target), read_only=read_only, check_within=check_within)


class Store:
    """The process's database behind a single worker thread."""

    def __init__(
        self,
        target: Path | str,
        migrations: Iterable[Migration] = (),
        read_only: bool = False,
        lock_wait: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        check_within: float = OPEN_CHECK_SECONDS,
    ) -> None:
        """``lock_wait``: seconds from now after which no open or job waits on another
        process's lock (a command's budget, ``events push --wait``); None: the backend's
        own bound on each wait. ``check_within``: seconds a SQLite file's pages may be
        checked for damage at open (:mod:`bothost.store.corruption`)."""
        self.backend = open_backend(target, read_only, check_within)
        self.clock = clock
        self.lock_deadline = None if lock_wait is None else clock() + lock_wait
        self.dialect: str = self.backend.dialect
        self.path: Path | None = getattr(self.backend, "path", None)  # SQLite's file
        self.label: str = self.backend.label  # the file, or the URL with secrets masked
        self._jobs: SimpleQueue[tuple[Callable[[Conn], Any], Future] | None] = SimpleQueue()
        self._thread = threading.Thread(target=self._work, name="bothost-store", daemon=True)
        self._ready: Future[None] = Future()
        self._migrations = list(migrations)
        self.health = self.backend.health  # every job's write outcome, for /healthz
        self._thread.start()
        try:
            self._ready.result()
            self.applied: list[str] = self.backend.applied  # "core:2", … applied by this open
        except StoreCorruptError as exc:
            raise StoreCorruptError(f"{self.label}: {exc}") from exc
        except StoreError as exc:
            raise StoreError(f"{self.label}: {exc}") from exc
        except Exception as exc:
            raise StoreError(f"{self.label}: {self.backend.explain(exc)}") from exc

    def _work(self) -> None:
        try:
            conn = self.backend.open(self._migrations, self.lock_wait_left())
        except Exception as exc:
            self._ready.set_exception(exc)
            return
        self._ready.set_result(None)
        while (job := self._jobs.get()) is not None:
            fn, future = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                conn = self.backend.reopen(conn)  # PostgreSQL: a dropped connection, again
                if (left := self.lock_wait_left()) is not None:
                    self.backend.limit_lock_wait(conn, left)  # the budget shrinks job by job
                before = conn.changes
                future.set_result(fn(self.refused(conn)))
                self.health.observe(conn.changes != before, None)
            except BaseException as exc:  # handed to the caller, who decides
                self.health.observe(False, exc)
                future.set_exception(self.corrupt_error(exc))
        self.backend.close(conn)

    def refused(self, conn: Conn) -> Conn:
        """``conn``, or once the file is known corrupt one that refuses every statement."""
        corrupt = self.health.corrupt
        return conn if corrupt is None else RefusedConn(conn, described(self.label, corrupt.reason))

    def corrupt_error(self, exc: BaseException) -> BaseException:
        """``exc``, or for a driver's word that the file is damaged the one line that names
        the file and the way out (:class:`StoreCorruptError`, raised from ``exc``)."""
        if isinstance(exc, StoreCorruptError) or not isinstance(exc, database_errors()):
            return exc  # a job's own error type stays, whatever it was raised from
        if not corruption(exc):
            return exc
        error = StoreCorruptError(described(self.label, str(exc)))
        error.__cause__ = exc
        return error

    def lock_wait_left(self) -> float | None:
        """Seconds a wait on another process's lock may still last (None: unbounded here)."""
        if self.lock_deadline is None:
            return None
        return max(0.0, self.lock_deadline - self.clock())

    def submit(self, fn: Callable[[Conn], T]) -> Future[T]:
        future: Future[T] = Future()
        self._jobs.put((fn, future))
        return future

    def post(self, fn: Callable[[Conn], Any], what: str) -> None:
        """Run ``fn(conn)`` on the store thread without waiting for it: for bookkeeping a
        caller need not hold up on. Jobs run in order on one thread, so every later job —
        a read included — sees its write; a failure is logged as ``what`` failing."""

        def report(future: Future[Any]) -> None:
            exc = future.exception()
            if exc is not None:
                logger.error("%s failed", what, exc_info=exc)

        self.submit(fn).add_done_callback(report)

    def call(self, fn: Callable[[Conn], T]) -> T:
        """Run ``fn(conn)`` on the store thread and wait (sync callers, CLI commands)."""
        return self.submit(fn).result()

    async def run(
        self, fn: Callable[[Conn], T], start_within: float | None = None, what: str = "a job"
    ) -> T:
        """Run ``fn(conn)`` on the store thread without blocking the event loop.

        With ``start_within`` (seconds, for a caller whose sender retries: a request), a job
        the thread has not started by then is withdrawn — it never runs — and
        :class:`StoreBusyError` names it (``what``). A job that has started is awaited to its
        end whatever the bound: it cannot be stopped part-way on this thread, and giving up on
        it would tell the caller "failed" of a write that then lands. Its own statements are
        bounded by the drivers' timeouts (SQLite's busy timeout, PostgreSQL's statement
        timeout and keepalives).
        """
        job = self.submit(fn)
        result = asyncio.wrap_future(job)
        if start_within is not None:
            try:
                await asyncio.wait({result}, timeout=start_within)
            except asyncio.CancelledError:
                job.cancel()  # as a plain await would: a queued job is dropped with its caller
                raise
            if not result.done() and job.cancel():  # True only while it is still queued
                raise StoreBusyError(
                    f"{what}: the store did not start it within {start_within:g} s (a job"
                    " before it is still running); nothing was written"
                )
        return await result

    def probe(self, conn: Conn) -> dict[str, Any]:
        """Whether the store can write now (for ``/healthz``); runs on the store thread."""
        return self.backend.probe(conn)

    def close(self) -> None:
        if self._thread.is_alive():
            self._jobs.put(None)
            self._thread.join(timeout=10)


def transaction(conn: Conn) -> Any:
    """``with transaction(conn):`` — the same as ``with conn.transaction():``."""
    return conn.transaction()
