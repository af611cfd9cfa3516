"""The PostgreSQL backend: several hosts share one database (``store.url: postgresql://…``).

psycopg 3, synchronously on the store's worker thread (see :mod:`bothost.store.db` for why),
one autocommit connection per process; :class:`~bothost.store.conn.PostgresConn` gives it the
same interface as SQLite's. Opening connects with a deadline, refuses a read-only server (a
standby) and a database written by a newer bothost, then applies the migrations under a
session advisory lock so hosts starting together migrate one at a time. A connection that
drops is opened again before the next job; the job that saw it drop fails as a storage
failure (503 and ``Retry-After`` on the HTTP side), never silently.

Every message that names the database shows the URL with its password masked.

psycopg is the ``postgres`` extra (``pip install 'bothost[postgres]'``), imported when a
PostgreSQL store opens, so this module imports, and a missing driver is one line saying how
to install it, on an install without it.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable
from typing import Any

from bothost.redact import mask_url, redact
from bothost.store.conn import POSTGRESQL, Conn, PostgresConn
from bothost.store.errors import StoreError
from bothost.store.health import WriteHealth, write_again
from bothost.store.migrations import Migration, apply_migrations
from bothost.store.version import refuse_newer_records

CONNECT_TIMEOUT = 10  # seconds: a server that does not answer by then is down, say so
# One stuck statement would stall every job behind it on the store thread; nothing bothost
# runs takes near this long (migrations wait for another host's under it, too).
STATEMENT_TIMEOUT_MS = 120_000
# Keepalives are only sent on an idle connection. A statement written into a network that
# has gone leaves unacknowledged data, and then the kernel retransmits for ~15 minutes
# (Linux's tcp_retries2) before the socket fails, with the store thread and every job behind
# it waiting: TCP_USER_TIMEOUT ends that after this long. Above the keepalive window
# below, which on Linux it also bounds; far above any ack delay of a live network.
TCP_USER_TIMEOUT_MS = 30_000
# A half-open TCP connection (a host or network gone) is noticed within about this many
# seconds of idleness (idle + interval * count), instead of hanging the thread. Every
# connection to PostgreSQL (the store's, the cross-host listener's) is opened with these.
KEEPALIVES: dict[str, Any] = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": TCP_USER_TIMEOUT_MS,
}
MIGRATE_LOCK_KEY = 0x626F74686F7374 + 1  # beside conn.WRITE_LOCK_KEY: "bothost" + 1
NO_DRIVER = (
    "PostgreSQL needs the psycopg driver, which is not installed: pip install 'bothost[postgres]'"
)


def driver() -> Any:
    """psycopg, or a StoreError saying how to install it."""
    try:
        import psycopg
    except ImportError as exc:
        raise StoreError(NO_DRIVER) from exc
    return psycopg


@functools.cache
def number_loader() -> type:
    """A loader of ``numeric`` as ``int`` when whole (``SUM`` of integers), else ``float``, as
    SQLite answers; a class of psycopg's, so made once the driver is there."""
    from psycopg.adapt import Loader

    class NumberLoader(Loader):
        def load(self, data: Any) -> int | float:
            text = bytes(data).decode()
            return int(text) if text.lstrip("-").isdigit() else float(text)

    return NumberLoader


class PostgresBackend:
    dialect = POSTGRESQL
    path = None

    def __init__(self, url: str) -> None:
        self.url = url
        self.label = mask_url(url)
        self.health = WriteHealth()
        self.applied: list[str] = []  # the migrations this open applied

    def connect(self) -> PostgresConn:
        psycopg = driver()
        raw = psycopg.connect(
            self.url,
            autocommit=True,
            connect_timeout=CONNECT_TIMEOUT,
            application_name="bothost",
            **KEEPALIVES,
        )
        raw.adapters.register_loader("numeric", number_loader())
        raw.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
        return PostgresConn(raw)

    def open(self, migrations: Iterable[Migration], lock_wait: float | None = None) -> PostgresConn:
        """The connection, migrated. ``lock_wait`` is SQLite's: here waits are bounded by
        the connect timeout, the statement timeout and the keepalives."""
        migrations = list(migrations)
        conn = self.connect()
        try:
            if conn.value("SHOW transaction_read_only") == "on":
                raise StoreError(
                    "read-only (a standby, or default_transaction_read_only); "
                    "point store.url at the primary"
                )
            conn.execute("SELECT pg_advisory_lock(?)", [MIGRATE_LOCK_KEY])
            try:
                refuse_newer_records(conn, migrations)  # before anything that could write
                self.applied = apply_migrations(conn, migrations)
            finally:
                conn.execute("SELECT pg_advisory_unlock(?)", [MIGRATE_LOCK_KEY])
        except BaseException:
            conn.raw.close()
            raise
        return conn

    def limit_lock_wait(self, conn: Conn, lock_wait: float) -> None:
        """Nothing: the statement timeout bounds a wait here (see :meth:`open`)."""

    def reopen(self, conn: Conn) -> Conn:
        assert isinstance(conn, PostgresConn)
        if not (conn.raw.closed or conn.raw.broken):
            return conn
        conn.raw.close()
        again = self.connect()
        again.announcements = conn.announcements  # the store's, not the connection's
        return again

    def probe(self, conn: Conn) -> dict[str, Any]:
        """A read always; a real write while the last write failed (recovery shows)."""
        try:
            conn.value("SELECT COUNT(*) FROM events WHERE status = 'pending'")
        except Exception as exc:  # the probe reports; it never breaks the health page
            self.health.observe(False, exc)
        if self.health.failure is not None:
            write_again(conn, self.health)
        return self.health.report()

    def close(self, conn: Conn) -> None:
        assert isinstance(conn, PostgresConn)
        conn.raw.close()

    def explain(self, exc: BaseException) -> str:
        """One line for psycopg's (often multi-line) error, with no secret in it."""
        text = " ".join(str(exc).split()) or type(exc).__name__
        operational = getattr(sys.modules.get("psycopg"), "OperationalError", ())
        if isinstance(exc, operational) and not getattr(exc, "sqlstate", None):
            text = f"cannot connect ({text})"
        return redact(text.replace(self.url, self.label))
