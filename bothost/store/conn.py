"""The connection every store function gets: one small interface over SQLite and PostgreSQL.

Code that reads or writes the database is a plain synchronous function of a :class:`Conn`,
run on the store's thread (``await store.run(fn)``), so the same SQL serves both backends:

* ``conn.execute(sql, params)`` → :class:`Rows` (``fetchone``, ``fetchall``, iteration over
  tuples, ``rowcount``, on SQLite ``lastrowid``); ``conn.query`` → a list of dicts;
  ``conn.one`` → a dict or None; ``conn.value`` → the first column of the first row or
  None; ``conn.executemany``.
* ``?`` placeholders (or ``:name`` with a mapping), translated for psycopg; a literal ``%``
  needs no escaping on either backend.
* ``with conn.transaction():`` — on SQLite ``BEGIN IMMEDIATE``; on PostgreSQL ``BEGIN`` plus
  a transaction-scoped advisory lock, so read-then-write code (dedupe, leases) is serialised
  across hosts exactly as SQLite serialises writers across processes. Nested ones are
  savepoints. Outside a transaction each statement commits on its own.
* ``conn.script(ddl)`` runs several ``;``-separated statements (migrations). On PostgreSQL it
  reads SQLite's type names as their 64-bit equivalents (``INTEGER PRIMARY KEY`` → an
  identity column, ``INTEGER`` → ``BIGINT``, ``REAL`` → ``DOUBLE PRECISION``, ``BLOB`` →
  ``BYTEA``), so one DDL text serves both.
* ``conn.dialect`` is ``"sqlite"`` or ``"postgresql"`` for the rare statement that must
  differ; ``conn.ids`` (``conn.texts``) is a subquery reading a JSON list of ids (of text)
  from one parameter.

Rows are fetched in full before ``execute`` returns (a result never holds a statement open),
booleans are stored as 0/1 on both, and sums of integers come back as ``int``. The one
exception is ``conn.pages(sql, size)``, for reads too long to hold at once (``db export``):
it yields the result a page at a time, inside a transaction, from a cursor held open
between pages (a server-side one on PostgreSQL).
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

Params = Sequence[Any] | Mapping[str, Any]

SQLITE = "sqlite"
POSTGRESQL = "postgresql"
# The key of the transaction-scoped advisory lock every PostgreSQL write transaction takes:
# one number in bothost's own range ("bothost" in ASCII), shared by every host on a database.
WRITE_LOCK_KEY = 0x626F74686F7374
WRITE_LOCK = f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})"
_IDLE = 0  # psycopg.pq.TransactionStatus.IDLE, without importing the driver here


class Rows:
    """A statement's result, fetched in full: a cursor's reading half, ``rowcount``, and on
    SQLite ``lastrowid`` (the rowid of the last row an INSERT inserted; None elsewhere)."""

    def __init__(
        self,
        columns: list[str],
        rows: list[tuple[Any, ...]],
        rowcount: int,
        lastrowid: int | None = None,
    ) -> None:
        self.columns = columns
        self.rows = rows
        self.rowcount = rowcount
        self.lastrowid = lastrowid
        self._next = 0

    def fetchone(self) -> Any:  # a tuple or None; Any as sqlite3's, so callers index freely
        if self._next >= len(self.rows):
            return None
        self._next += 1
        return self.rows[self._next - 1]

    def fetchall(self) -> list[tuple[Any, ...]]:
        rest, self._next = self.rows[self._next :], len(self.rows)
        return rest

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.fetchall())

    def dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.fetchall()]


class Conn:
    """What store functions use; :class:`SqliteConn` and :class:`PostgresConn` implement it."""

    dialect: str
    ids: str  # "SELECT … FROM <a JSON list of ids bound as one parameter>"
    texts: str  # the same for a JSON list of text (a batch's keys)
    # what this store's writers announced, per name: one dict per store, kept across a
    # reconnect, so two stores in one process (two hosts, tests) never see each other's
    announcements: dict[str, int]

    def announce(self, name: str) -> None:
        """Tell the readers of this store in this process that ``name`` changed: a cache of
        something that rarely changes (the stored triage rules) is read again at once
        rather than at its next timed refresh, which is how other processes' changes
        reach it."""
        self.announcements[name] = self.announcements.get(name, 0) + 1

    def announced(self, name: str) -> int:
        """How many times ``name`` was announced on this store (see :meth:`announce`)."""
        return self.announcements.get(name, 0)

    def execute(self, sql: str, params: Params = ()) -> Rows:
        raise NotImplementedError

    def executemany(self, sql: str, seq: Sequence[Params]) -> int:
        """Run ``sql`` once per parameter set; the rows changed in all."""
        return sum(max(self.execute(sql, params).rowcount, 0) for params in seq)

    def query(self, sql: str, params: Params = ()) -> list[dict[str, Any]]:
        return self.execute(sql, params).dicts()

    def one(self, sql: str, params: Params = ()) -> dict[str, Any] | None:
        rows = self.execute(sql, params).dicts()
        return rows[0] if rows else None

    def value(self, sql: str, params: Params = ()) -> Any:
        row = self.execute(sql, params).fetchone()
        return row[0] if row else None

    def insert(self, table: str, row: Mapping[str, Any], returning: str | None = None) -> Any:
        """``INSERT`` one row from a mapping of trusted column names; ``returning``'s value."""
        columns = ", ".join(quote(c) for c in row)
        marks = ", ".join("?" for _ in row)
        sql = f"INSERT INTO {table} ({columns}) VALUES ({marks})"
        if returning is None:
            self.execute(sql, list(row.values()))
            return None
        return self.value(f"{sql} RETURNING {returning}", list(row.values()))

    def pages(self, sql: str, size: int) -> Iterator[Rows]:
        """The rows of ``sql`` at most ``size`` at a time, each page a :class:`Rows`; the first
        page always comes, empty or not, so its ``columns`` are known. Only inside a
        transaction (the statement stays open between pages); run nothing else on this
        connection until the pages end or the iterator is closed."""
        raise NotImplementedError

    def transaction(self) -> Any:
        """``with conn.transaction():`` — commit on success, roll back on an exception."""
        raise NotImplementedError

    def try_lock(self, name: str) -> bool:
        """Hold the lock ``name`` for as long as this connection lives, unless another
        connection holds it (False). PostgreSQL: a session advisory lock, released by the
        server when the process or its connection dies. SQLite: always True — one file has
        no such lock, and callers keep a lease row with an expiry as well."""
        return True

    def unlock(self, name: str) -> None:
        """Give back a lock :meth:`try_lock` took (nothing if this connection lacks it)."""

    def holds(self, name: str) -> bool:
        """Whether this connection holds the lock ``name``."""
        return False

    def script(self, sql: str) -> None:
        """Run ``;``-separated statements with no parameters (migrations)."""
        raise NotImplementedError

    @property
    def in_transaction(self) -> bool:
        raise NotImplementedError

    @property
    def changes(self) -> int:
        """Rows changed through this connection so far (the store's health watches it)."""
        raise NotImplementedError

    def table_names(self) -> list[str]:
        raise NotImplementedError


def paged(columns: list[str], fetch: Any, size: int) -> Iterator[Rows]:
    """Pages from a cursor's ``fetchmany``: the first always, then each non-empty one."""
    page = fetch(size)
    yield Rows(columns, page, len(page))
    while len(page) == size:
        page = fetch(size)
        if page:
            yield Rows(columns, page, len(page))


def quote(name: str) -> str:
    """A column name quoted for both dialects (``user`` is reserved in PostgreSQL)."""
    return '"' + name.replace('"', '""') + '"'


# -- SQLite ---------------------------------------------------------------------------------


class SqliteConn(Conn):
    dialect = SQLITE
    ids = "SELECT value FROM json_each(?)"
    texts = ids

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw  # the driver's connection, for SQLite-only code (PRAGMAs, limits)
        self._savepoints = 0
        self.announcements = {}

    def execute(self, sql: str, params: Params = ()) -> Rows:
        cursor = self.raw.execute(sql, params)
        columns = [d[0] for d in cursor.description] if cursor.description else []
        rows = cursor.fetchall() if cursor.description else []
        return Rows(columns, rows, cursor.rowcount, cursor.lastrowid)

    def executemany(self, sql: str, seq: Sequence[Params]) -> int:
        return max(self.raw.executemany(sql, seq).rowcount, 0)

    def pages(self, sql: str, size: int) -> Iterator[Rows]:
        cursor = self.raw.execute(sql)
        try:
            columns = [d[0] for d in cursor.description]
            yield from paged(columns, cursor.fetchmany, size)
        finally:
            cursor.close()

    @contextmanager
    def transaction(self) -> Iterator[SqliteConn]:
        if self.raw.in_transaction:
            self._savepoints += 1
            name = f"sp{self._savepoints}"
            self.raw.execute(f"SAVEPOINT {name}")
            try:
                yield self
            except BaseException:
                if self.raw.in_transaction:
                    self.raw.execute(f"ROLLBACK TO {name}")
                    self.raw.execute(f"RELEASE {name}")
                raise
            else:
                self.raw.execute(f"RELEASE {name}")
            finally:
                self._savepoints -= 1
            return
        # IMMEDIATE: writers queue for the lock up front instead of failing at the first write
        self.raw.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            if self.raw.in_transaction:  # SQLite may have rolled back already (disk full, I/O)
                self.raw.execute("ROLLBACK")
            raise
        self.raw.execute("COMMIT")

    def script(self, sql: str) -> None:
        for statement in split_statements(sql):
            self.raw.execute(statement)

    @property
    def in_transaction(self) -> bool:
        return self.raw.in_transaction

    @property
    def changes(self) -> int:
        return self.raw.total_changes

    def table_names(self) -> list[str]:
        return [
            r[0]
            for r in self.raw.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]


def split_statements(sql: str) -> list[str]:
    """``sql`` cut at the ``;`` that end statements (not those inside quotes or triggers)."""
    statements, current = [], ""
    for piece in sql.split(";"):
        current += piece + ";"
        if sqlite3.complete_statement(current):
            if current.strip(" \n\t;"):
                statements.append(current.strip())
            current = ""
    if current.strip(" \n\t;"):
        statements.append(current.strip())
    return statements


# -- PostgreSQL -----------------------------------------------------------------------------


class PostgresConn(Conn):
    dialect = POSTGRESQL
    ids = "SELECT value::bigint FROM json_array_elements_text(?::json)"
    texts = "SELECT value FROM json_array_elements_text(?::json)"

    def __init__(self, raw: Any) -> None:
        self.raw = raw  # a psycopg.Connection in autocommit mode
        self._changes = 0
        self.announcements = {}
        self._depth = 0
        self._begin_pending = False  # a transaction is open here but not yet on the server
        self._savepoints = 0
        self._locks: set[str] = set()  # session advisory locks held, by name

    def try_lock(self, name: str) -> bool:
        if name not in self._locks:  # advisory locks stack: take each once per session
            if not self.value("SELECT pg_try_advisory_lock(?)", [lock_key(name)]):
                return False
            self._locks.add(name)
        return True

    def unlock(self, name: str) -> None:
        if name in self._locks:
            self._locks.discard(name)
            self.execute("SELECT pg_advisory_unlock(?)", [lock_key(name)])

    def holds(self, name: str) -> bool:
        return name in self._locks

    def execute(self, sql: str, params: Params = ()) -> Rows:
        with self.raw.cursor() as cursor:
            query = translate(sql, isinstance(params, Mapping))
            if self._begin_pending:
                self._begin(cursor, query, adapt(params))
            else:
                cursor.execute(query, adapt(params))
            status = cursor.statusmessage or ""
            if status.startswith(("INSERT", "UPDATE", "DELETE", "MERGE")):
                self._changes += max(cursor.rowcount, 0)
            if cursor.description is None:
                return Rows([], [], cursor.rowcount)
            columns = [d.name for d in cursor.description]
            return Rows(columns, cursor.fetchall(), cursor.rowcount)

    def pages(self, sql: str, size: int) -> Iterator[Rows]:
        self._start()
        # a named cursor is a server-side one: the server keeps the result, FETCH reads a page
        with self.raw.cursor(name="bothost_pages") as cursor:
            cursor.execute(translate(sql, False))
            columns = [d.name for d in cursor.description]
            yield from paged(columns, cursor.fetchmany, size)

    def executemany(self, sql: str, seq: Sequence[Params]) -> int:
        seq = list(seq)
        if not seq:
            return 0
        named = isinstance(seq[0], Mapping)
        self._start()
        with self.raw.cursor() as cursor:  # psycopg pipelines these: one round trip in all
            cursor.executemany(translate(sql, named), [adapt(p) for p in seq])
            changed = max(cursor.rowcount, 0)
        self._changes += changed
        return changed

    @contextmanager
    def transaction(self) -> Iterator[PostgresConn]:
        # Round trips are what a write costs here (the server is a network hop away, and a
        # busy machine adds a scheduling delay to each): BEGIN and the write lock are not
        # sent on their own but in one pipeline with the transaction's first statement, so
        # a one-statement transaction is two round trips (that statement, COMMIT), not four;
        # one that runs nothing sends nothing.
        if self._depth:
            with self._savepoint():
                yield self
            return
        self._depth, self._begin_pending = 1, True
        try:
            yield self
        except BaseException:
            self._end("ROLLBACK")
            raise
        else:
            self._end("COMMIT")

    def _begin(self, cursor: Any = None, query: str | None = None, params: Any = None) -> None:
        """BEGIN, the write lock and (given) the first statement, pipelined: one round trip."""
        self._begin_pending = False
        with self.raw.pipeline():  # its end is the one Sync: the server answers all three
            self.raw.execute("BEGIN", prepare=False)  # never prepared: see _end
            # serialise writers across hosts, as BEGIN IMMEDIATE does on SQLite
            self.raw.execute(WRITE_LOCK, prepare=False)
            if cursor is not None:
                cursor.execute(query, params)

    def _start(self) -> None:
        """Send a pending BEGIN before a statement that does not join its pipeline."""
        if self._begin_pending:
            self._begin()

    def _end(self, statement: str) -> None:
        begun = not self._begin_pending
        self._depth, self._begin_pending = 0, False
        if not begun:
            return
        if statement == "ROLLBACK" and (
            self.raw.closed or self.raw.broken or self.raw.info.transaction_status == _IDLE
        ):
            return  # nothing left to undo (and no error to hide the caller's with)
        # never prepared: psycopg prepares a statement on its 5th run, and that run of COMMIT
        # cost a round trip of its own (which run it is depends on how many migrations ran)
        self.raw.execute(statement, prepare=False)

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        self._savepoints += 1
        name = f"sp{self._savepoints}"
        self.execute(f"SAVEPOINT {name}")
        self._depth += 1
        try:
            yield
        except BaseException:
            if not (self.raw.closed or self.raw.broken):
                self.execute(f"ROLLBACK TO SAVEPOINT {name}")
            raise
        else:
            self.execute(f"RELEASE SAVEPOINT {name}")
        finally:
            self._depth -= 1
            self._savepoints -= 1

    def script(self, sql: str) -> None:
        self._start()
        with self.raw.cursor() as cursor:
            cursor.execute(postgres_ddl(sql).encode(), prepare=False)

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    @property
    def changes(self) -> int:
        return self._changes

    def table_names(self) -> list[str]:
        return [
            r[0]
            for r in self.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                " ORDER BY tablename"
            )
        ]


def lock_key(name: str) -> int:
    """A stable signed 64-bit advisory lock key for ``name``, the same in every process."""
    digest = hashlib.sha256(f"bothost:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


# PostgreSQL's text cannot hold U+0000, and a NUL reaches the store from outside (a chat
# message, a webhook's user, a tool result): it is stored as U+FFFD, the character Unicode
# keeps for one that cannot be represented, in writes and lookups alike
NUL, NUL_STAND_IN = "\x00", "\ufffd"


def adapt(params: Params) -> Any:
    """Parameters as psycopg takes them: booleans as 0/1, as SQLite stores them, and text
    without NUL (:data:`NUL_STAND_IN`)."""
    if isinstance(params, Mapping):
        return {k: _value(v) for k, v in params.items()}
    return [_value(v) for v in params]


def _value(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and NUL in value:
        return value.replace(NUL, NUL_STAND_IN)
    return value


# Pieces of SQL a translation must step over: quoted strings and names, comments, casts.
_LEXEME = re.compile(
    r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|/\*.*?\*/|::|\?|:[A-Za-z_]\w*|%""", re.S
)


@lru_cache(maxsize=1024)
def translate(sql: str, named: bool) -> str:
    """``?`` → ``%s``, ``:name`` → ``%(name)s`` (with a mapping), ``%`` → ``%%``."""

    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token[0] in "'\"-/":  # quoted or commented: psycopg still reads its % signs
            return token.replace("%", "%%")
        if token == "?":
            return "%s"
        if token == "%":
            return "%%"
        if named and token.startswith(":") and token != "::":
            return f"%({token[1:]})s"
        return token

    return _LEXEME.sub(one, sql)


_DDL_TYPES = re.compile(
    r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*"""
    r"""|\bINTEGER\s+PRIMARY\s+KEY(?:\s+AUTOINCREMENT)?\b|\bINTEGER\b"""
    r"""|\bREAL\b|\bBLOB\b""",
    re.S | re.I,
)
_DDL_MAP = {
    "integer": "BIGINT",
    "real": "DOUBLE PRECISION",
    "blob": "BYTEA",
}


@lru_cache(maxsize=256)
def postgres_ddl(sql: str) -> str:
    """SQLite's type names in ``sql`` as PostgreSQL's 64-bit equivalents."""

    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token[0] in "'\"-":
            return token
        if " " in token or "\t" in token or "\n" in token:  # INTEGER PRIMARY KEY
            return "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
        return _DDL_MAP[token.lower()]

    return _DDL_TYPES.sub(one, sql)
