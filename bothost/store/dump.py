"""A database as one portable file: ``bothost db export`` writes it, ``db import`` reads it.

The dump is JSON lines, written and read by the store's own :class:`~bothost.store.conn.Conn`
on either backend, so a SQLite home moves to PostgreSQL (or back, or to another file):

* line 1, the header: ``{"format": "bothost-dump", "version": 1, "dialect": …,
  "exported_at": …, "migrations": ["core:1", …]}`` — every migration the source recorded, of
  core and of every plugin;
* per table, ``{"table": NAME, "columns": [...]}`` followed by its rows, one JSON array
  each (bytes as ``{"base64": …}``);
* last, ``{"end": {"tables": N, "rows": M}}``, so a cut-off file is refused, not half-read.

Export reads every table (except ``_migrations``, which the header replaces, and SQLite's own)
in one read-only snapshot, a page of rows at a time (``PAGE``), so a table of any length
passes through bounded memory. The rows of ``locks`` are left out: they are leases of processes
on the source database, and a copied one would only keep the new database's tick waiting.

Import refuses, before writing anything:

* a dump whose migrations differ from the target's, naming each one that differs (the target
  is migrated by this bothost and its plugins when it opens);
* a table or column the two do not share;
* a target that holds any row: the copy keeps every id (events, messages and briefings refer
  to each other by id), so merging into a used database would collide or silently mix two
  histories; a fresh database is always available, a half-merge is hard to undo.

Then it writes everything in one transaction on the target: a failure leaves it empty. A
NUL character in text, which a SQLite home keeps, is written to PostgreSQL as U+FFFD, as a
PostgreSQL host stores one it is given (:data:`~bothost.store.conn.NUL_STAND_IN`); the
import counts those values. A value the target cannot hold (text where PostgreSQL's
``bigint`` needs a whole number, a row a constraint refuses — two keys that differ only by
a NUL and U+FFFD among them) ends the import with the table, the row's position, the dump's
line and the column — never the value, which may be a secret. On PostgreSQL each identity
counter is then set past the highest imported id.

The dump holds secrets (OAuth tokens, the headers and env of MCP servers added at run time):
the CLI creates the file 0600 and never prints a row.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from bothost.store.conn import NUL, NUL_STAND_IN, POSTGRESQL, SQLITE, Conn, quote
from bothost.store.errors import row_errors

FORMAT = "bothost-dump"
VERSION = 1  # of the file's layout; a reader refuses a version it does not know
MIGRATIONS_TABLE = "_migrations"
# Rows not carried over, with the reason (see the module docstring).
SKIPPED_ROWS = {"locks": "leases of the source's processes"}
# Rows read at a time while exporting: memory stays bounded by a page, not a table (an events
# row may hold a 256 KiB payload, so even a page of those is ~50 MB), and on PostgreSQL a
# page of ordinary rows is one round trip.
PAGE = 200
# Rows per INSERT batch: big enough that round trips do not dominate on PostgreSQL, small
# enough that finding the one bad row of a refused batch (row by row) stays quick.
BATCH = 1000
# PostgreSQL column types by the Python values a row may hold for them (SQLite takes any).
WHOLE = {"bigint", "integer", "smallint"}
NUMBER = {"double precision", "real", "numeric"}
TEXT = {"text", "character varying", "character"}
BYTES = {"bytea"}


class DumpError(Exception):
    """The dump cannot be written or imported; the message names the table, row or line."""


@dataclass
class Imported:
    """What an import copied: rows by table, and the text values that held a NUL, stored as
    U+FFFD on PostgreSQL (always 0 on SQLite, which keeps them)."""

    tables: dict[str, int]
    nul_replaced: int = 0


# -- files ------------------------------------------------------------------------------------

STDIO = "-"
FILE_MODE = 0o600  # the dump holds OAuth tokens and servers' credentials


def write_dump(store: Any, path: str) -> dict[str, int]:
    """Export ``store`` to a new file at ``path`` (0600; an existing file is refused, so a
    dump never lands in a file others can read), or to standard output for ``-`` when it
    is not a terminal. A failed export removes its file."""
    if path == STDIO:
        if sys.stdout.isatty():
            raise DumpError(
                "refusing to print the dump on a terminal: it holds secrets; "
                "name a file, or pipe it (bothost db export - | …)"
            )
        counts: dict[str, int] = store.call(lambda conn: export_dump(conn, sys.stdout))
        sys.stdout.flush()
        return counts
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        raise DumpError(f"{path} exists; remove it or name a new file") from None
    except OSError as exc:
        raise DumpError(f"{path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            counts = store.call(lambda conn: export_dump(conn, out))
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            Path(path).unlink()
        raise
    return counts


def read_dump(store: Any, path: str) -> Imported:
    """Import the dump at ``path`` (or standard input for ``-``) into ``store``."""
    if path == STDIO:
        result: Imported = store.call(lambda conn: import_dump(conn, sys.stdin))
        return result
    try:
        source = open(path, encoding="utf-8")  # noqa: SIM115 (closed below, after the store's job)
    except OSError as exc:
        raise DumpError(f"{path}: {exc.strerror}") from None
    with source:
        result = store.call(lambda conn: import_dump(conn, source))
    return result


# -- export -----------------------------------------------------------------------------------


def export_dump(conn: Conn, out: IO[str]) -> dict[str, int]:
    """Write every table of ``conn``'s database to ``out``; rows written, by table."""
    counts: dict[str, int] = {}
    with snapshot(conn):
        header = {
            "format": FORMAT,
            "version": VERSION,
            "dialect": conn.dialect,
            "exported_at": time.time(),
            "migrations": applied(conn),
        }
        out.write(json.dumps(header) + "\n")
        for table in data_tables(conn):
            try:
                counts[table] = export_table(conn, table, out)
            except UnicodeDecodeError as exc:  # SQLite text that is not UTF-8
                raise DumpError(f"table {table}: a value is not valid UTF-8 text ({exc})") from exc
        out.write(json.dumps({"end": {"tables": len(counts), "rows": sum(counts.values())}}))
        out.write("\n")
    return counts


def export_table(conn: Conn, table: str, out: IO[str]) -> int:
    """Write one table's header line and rows, a page at a time; the rows written."""
    if table in SKIPPED_ROWS:
        columns = conn.execute(f"SELECT * FROM {quote(table)} LIMIT 0").columns
        out.write(json.dumps({"table": table, "columns": columns}) + "\n")
        return 0
    count = 0
    for number, page in enumerate(conn.pages(f"SELECT * FROM {quote(table)}", PAGE)):
        if number == 0:  # the first page, even an empty one, knows the columns
            out.write(json.dumps({"table": table, "columns": page.columns}) + "\n")
        for row in page.rows:
            out.write(json.dumps([encode(v) for v in row]) + "\n")
        count += len(page.rows)
    return count


class snapshot:
    """A read-only transaction, so the tables are read as of one moment while hosts write."""

    def __init__(self, conn: Conn) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        if self.conn.dialect == POSTGRESQL:
            self.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        else:  # WAL: a deferred transaction reads one snapshot and blocks no writer
            self.conn.execute("BEGIN")

    def __exit__(self, *exc: object) -> None:
        self.conn.execute("COMMIT")  # nothing was written: ending it either way is the same


def applied(conn: Conn) -> list[str]:
    """The migrations recorded in the database, as ``component:number``, in order."""
    rows = conn.execute(f"SELECT component, number FROM {MIGRATIONS_TABLE}").fetchall()
    return [f"{c}:{n}" for c, n in sorted(rows, key=lambda r: (r[0] != "core", r[0], r[1]))]


def data_tables(conn: Conn) -> list[str]:
    """Every table bothost or a plugin made: not the migration record, not SQLite's own."""
    return [t for t in conn.table_names() if t != MIGRATIONS_TABLE and not t.startswith("sqlite_")]


def encode(value: Any) -> Any:
    if isinstance(value, bytes | memoryview):
        return {"base64": base64.b64encode(bytes(value)).decode()}
    return value


def decode(value: Any) -> Any:
    if isinstance(value, dict):
        return base64.b64decode(value["base64"])
    return value


# -- import -----------------------------------------------------------------------------------


def import_dump(conn: Conn, lines: Iterable[str]) -> Imported:
    """Copy a dump into ``conn``'s empty database in one transaction."""
    reader = Reader(lines)
    header = reader.header()
    check_migrations(header["migrations"], applied(conn))
    with conn.transaction():
        refuse_rows(conn)
        targets = {t: columns_of(conn, t) for t in data_tables(conn)}
        counts: dict[str, int] = {}
        nul_replaced = 0
        for table, columns, rows in reader.tables():
            if table not in targets:
                raise DumpError(
                    f"table {table} is in the dump but not in this database "
                    "(made outside the migrations?); nothing imported"
                )
            check_columns(table, columns, targets[table])
            counts[table], nuls = insert_rows(conn, table, columns, targets[table], rows)
            nul_replaced += nuls
        if missing := sorted(set(targets) - set(counts)):
            raise DumpError(
                f"this database has tables the dump lacks: {', '.join(missing)}; nothing imported"
            )
        reader.check_end(counts)
        advance_identities(conn)
    return Imported(counts, nul_replaced)


class Reader:
    """The dump's lines, checked as they are read; errors name the line."""

    def __init__(self, lines: Iterable[str]) -> None:
        self._lines = enumerate(lines, start=1)
        self.line = 0
        self._pending: Any = None
        self.end: dict[str, Any] | None = None

    def _next(self) -> Any:
        if self._pending is not None:
            item, self._pending = self._pending, None
            return item
        for number, text in self._lines:
            self.line = number
            if not text.strip():
                continue
            try:
                return json.loads(text)
            except ValueError:
                raise DumpError(f"line {self.line} is not JSON: the dump is damaged") from None
        return None

    def header(self) -> dict[str, Any]:
        item = self._next()
        if not isinstance(item, dict) or item.get("format") != FORMAT:
            raise DumpError("not a bothost dump (its first line is not a bothost-dump header)")
        if item.get("version") != VERSION:
            raise DumpError(
                f"dump format version {item.get('version')!r}; this bothost reads {VERSION}"
            )
        if not isinstance(item.get("migrations"), list):
            raise DumpError("the dump's header lists no migrations: the dump is damaged")
        return item

    def tables(self) -> Iterator[tuple[str, list[str], Iterator[tuple[int, list[Any]]]]]:
        while True:
            item = self._next()
            if item is None:
                raise DumpError(f"the dump ends at line {self.line} without its end line: cut off?")
            if isinstance(item, dict) and "end" in item:
                self.end = item["end"]
                return
            if not (isinstance(item, dict) and isinstance(item.get("table"), str)):
                raise DumpError(f"line {self.line}: expected a table's header")
            rows = self._rows(item["table"], item["columns"])
            yield item["table"], item["columns"], rows
            for _ in rows:  # whatever the consumer left unread
                pass

    def _rows(self, table: str, columns: list[str]) -> Iterator[tuple[int, list[Any]]]:
        while True:
            item = self._next()
            if not isinstance(item, list):
                self._pending = item
                return
            if len(item) != len(columns):
                raise DumpError(
                    f"table {table}, line {self.line}: {len(item)} values for "
                    f"{len(columns)} columns: the dump is damaged"
                )
            yield self.line, [decode(v) for v in item]

    def check_end(self, counts: dict[str, int]) -> None:
        expected = (self.end or {}).get("rows")
        if expected != sum(counts.values()):
            raise DumpError(
                f"the dump's end line counts {expected} rows but {sum(counts.values())} were "
                "read: the dump is damaged; nothing imported"
            )


def check_migrations(dumped: list[str], here: list[str]) -> None:
    """Refuse a dump of another schema, naming what differs and what to do."""
    only_dump = [m for m in dumped if m not in here]
    only_here = [m for m in here if m not in dumped]
    if not (only_dump or only_here):
        return
    parts = []
    if only_dump:
        parts.append(
            f"the dump has {', '.join(only_dump)}, which this database lacks (install or "
            "upgrade bothost or the plugin that owns it, then import again)"
        )
    if only_here:
        parts.append(
            f"this database has {', '.join(only_here)}, which the dump lacks (run "
            "`bothost db migrate` on the source with this bothost, then export again)"
        )
    raise DumpError("the dump's schema differs: " + "; ".join(parts) + "; nothing imported")


def refuse_rows(conn: Conn) -> None:
    used = [t for t in data_tables(conn) if conn.value(f"SELECT 1 FROM {quote(t)} LIMIT 1")]
    if used:
        raise DumpError(
            f"this database is not empty ({', '.join(used)} hold rows); import only into a "
            "new database: the dump keeps every id, which would collide with or mix into "
            "what is there; nothing imported"
        )


def columns_of(conn: Conn, table: str) -> dict[str, str | None]:
    """The table's columns and, on PostgreSQL, their types (SQLite takes any value)."""
    names = conn.execute(f"SELECT * FROM {quote(table)} LIMIT 0").columns
    if conn.dialect == SQLITE:
        return dict.fromkeys(names)
    types = dict(
        conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = ?",
            [table],
        ).fetchall()
    )
    return {name: types.get(name) for name in names}


def check_columns(table: str, dumped: list[str], here: dict[str, str | None]) -> None:
    lacking = [c for c in dumped if c not in here]
    extra = [c for c in here if c not in dumped]
    if lacking or extra:
        what = [f"the dump has {', '.join(lacking)}"] if lacking else []
        what += [f"this database has {', '.join(extra)}"] if extra else []
        raise DumpError(f"table {table}: columns differ ({'; '.join(what)}); nothing imported")


def insert_rows(
    conn: Conn,
    table: str,
    columns: list[str],
    types: dict[str, str | None],
    rows: Iterator[tuple[int, list[Any]]],
) -> tuple[int, int]:
    """Insert ``rows`` as the target's columns take them; (rows, text values that held NUL)."""
    sql = (
        f"INSERT INTO {quote(table)} ({', '.join(quote(c) for c in columns)})"
        f" VALUES ({', '.join('?' for _ in columns)})"
    )
    kinds = [types[c] for c in columns]
    count, nuls, batch = 0, 0, []
    for line, values in rows:
        count += 1
        nuls += sum(holds_nul(v, k) for v, k in zip(values, kinds, strict=True))
        fitted = [
            fit(table, count, line, c, v, k) for c, v, k in zip(columns, values, kinds, strict=True)
        ]
        batch.append((count, line, fitted))
        if len(batch) >= BATCH:
            insert_batch(conn, table, sql, batch)
            batch = []
    if batch:
        insert_batch(conn, table, sql, batch)
    return count, nuls


def fit(table: str, position: int, line: int, column: str, value: Any, kind: str | None) -> Any:
    """``value`` as the target column takes it, or a DumpError naming where (not what)."""
    if value is None or kind is None:
        return value
    need = None
    if kind in WHOLE:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        need = None if isinstance(value, int) else "a whole number"
    elif kind in NUMBER:
        need = None if isinstance(value, int | float) else "a number"
    elif kind in TEXT:
        if not isinstance(value, str):
            need = "text"
        elif NUL in value:  # PostgreSQL's text holds none: stored as a host there stores it
            return value.replace(NUL, NUL_STAND_IN)
    elif kind in BYTES:
        need = None if isinstance(value, bytes) else "bytes"
    if need:
        raise misfit(table, position, line, column, f"{held(value)} where {need} belongs", kind)
    return value


def holds_nul(value: Any, kind: str | None) -> bool:
    """Whether :func:`fit` stores ``value`` with U+FFFD for each NUL (PostgreSQL's text)."""
    return kind in TEXT and isinstance(value, str) and NUL in value


def held(value: Any) -> str:
    return {bool: "a flag", int: "a whole number", float: "a fraction", str: "text"}.get(
        type(value), "bytes" if isinstance(value, bytes) else type(value).__name__
    )


def misfit(table: str, position: int, line: int, column: str, what: str, kind: str) -> DumpError:
    return DumpError(
        f"table {table}, row {position} (line {line} of the dump), column {column}: {what} "
        f"(the column is {kind}); fix that row in the source and export again; nothing imported"
    )


def insert_batch(conn: Conn, table: str, sql: str, batch: list[tuple[int, int, list[Any]]]) -> None:
    """Insert ``batch``; when the database refuses it, find and name the row it refused."""
    try:
        with conn.transaction():  # a savepoint: a refused batch leaves the import going
            conn.executemany(sql, [values for _, _, values in batch])
        return
    except row_errors() as exc:
        failure: BaseException = exc
    for position, line, values in batch:
        try:
            with conn.transaction():
                conn.execute(sql, values)
        except row_errors() as exc:
            failure = exc
            raise DumpError(
                f"table {table}, row {position} (line {line} of the dump): the database "
                f"refused it ({reason(exc)}); nothing imported"
            ) from exc
    raise DumpError(f"table {table}: the database refused a batch ({reason(failure)})")


def reason(exc: BaseException) -> str:
    """What was wrong, without the values PostgreSQL's detail line quotes."""
    primary = getattr(getattr(exc, "diag", None), "message_primary", None)
    if primary:
        return str(primary)
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def advance_identities(conn: Conn) -> None:
    """Set each PostgreSQL identity counter past the highest id imported (SQLite's rowid
    already continues from the highest)."""
    if conn.dialect != POSTGRESQL:
        return
    for table, column in conn.execute(
        "SELECT table_name, column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND is_identity = 'YES'"
    ).fetchall():
        highest = conn.value(f"SELECT MAX({quote(column)}) FROM {quote(table)}")
        conn.execute(
            "SELECT setval(pg_get_serial_sequence(?, ?), ?, false)",
            [quote(table), column, (highest or 0) + 1],
        )
