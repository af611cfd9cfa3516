"""Whether this bothost may open a database: it must be writable and not newer.

"Newer" has two signs, either enough to refuse before anything is written or migrated:

- on SQLite, ``PRAGMA user_version`` above the highest core migration this build knows.
  Every open records that number there, so any later bothost that adds a core migration
  leaves a version this one can recognise — even one that changed how ``_migrations`` looks.
- on both backends, a ``_migrations`` record ``(component, number)`` this build does not have,
  for a component it knows (core or a plugin's): a number above its highest, or one below
  it that it lacks. Numbers are reserved ahead and have landed out of order (core:12 before
  core:8-11), so a build knowing 1-7 and 12 must refuse a store that holds 11. A component
  this build does not know at all (a plugin since uninstalled) is no reason to refuse: its
  tables are simply unused.

A database is never migrated down; the fix is to upgrade bothost (or the plugin).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from bothost.store.conn import Conn, SqliteConn
from bothost.store.corruption import FIX, is_corrupt
from bothost.store.errors import StoreError
from bothost.store.migrations import Migration

CORE = "core"


def known_versions(migrations: Iterable[Migration]) -> dict[str, int]:
    """The highest migration number this build knows, per component."""
    known: dict[str, int] = {}
    for m in migrations:
        known[m.component] = max(known.get(m.component, 0), m.number)
    return known


def newer(found: int, ours: int, component: str = CORE) -> StoreError:
    if component == CORE:
        return StoreError(
            f"created by a newer bothost (schema {found}, this one knows {ours}); upgrade bothost"
        )
    return StoreError(
        f"created by a newer version of the plugin that owns {component!r} "
        f"(schema {found}, this one knows {ours}); upgrade that plugin"
    )


def refuse_newer(conn: sqlite3.Connection, migrations: Iterable[Migration]) -> None:
    """Raise :class:`StoreError` if the database was written by a newer bothost."""
    migrations = list(migrations)
    known = known_versions(migrations)
    recorded = conn.execute("PRAGMA user_version").fetchone()[0]
    if recorded > known.get(CORE, 0):
        raise newer(recorded, known.get(CORE, 0))
    refuse_newer_records(SqliteConn(conn), migrations)


def lacking(found: tuple[str, int], component: str) -> StoreError:
    label = f"it holds migration {found[0]}:{found[1]}, which this one lacks"
    if component == CORE:
        return StoreError(f"created by a newer bothost ({label}); upgrade bothost")
    return StoreError(
        f"created by a newer version of the plugin that owns {component!r} ({label}); "
        "upgrade that plugin"
    )


def refuse_newer_records(conn: Conn, migrations: Iterable[Migration]) -> None:
    """Raise :class:`StoreError` if ``_migrations`` records a migration this build lacks."""
    migrations = list(migrations)
    known = known_versions(migrations)
    have = {(m.component, m.number) for m in migrations}
    if "_migrations" not in conn.table_names():
        return
    recorded = sorted(
        (str(c), int(n))
        for c, n in conn.execute("SELECT component, number FROM _migrations")
        if c in known
    )
    for component, number in recorded:
        if number > known[component]:
            top = max(n for c, n in recorded if c == component)
            raise newer(top, known[component], component)
    for component, number in recorded:
        if (component, number) not in have:
            raise lacking((component, number), component)


def check_writable(conn: sqlite3.Connection) -> None:
    """Refuse a read-only database at open, not at the first write a command attempts.

    A write inside a transaction that is rolled back: it touches nothing, and it fails the
    way a real write would (file mode, owner, read-only mount), for root without
    CAP_DAC_OVERRIDE too.
    """
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"PRAGMA user_version = {int(version)}")
    finally:
        conn.execute("ROLLBACK")


def record_version(conn: sqlite3.Connection, migrations: Iterable[Migration]) -> None:
    """Write the highest core migration applied, so an older bothost can refuse this file."""
    ours = known_versions(migrations).get(CORE, 0)
    if conn.execute("PRAGMA user_version").fetchone()[0] < ours:
        conn.execute(f"PRAGMA user_version = {int(ours)}")


def explain(exc: sqlite3.Error) -> str:
    """One line for SQLite's error when opening, saying what to do."""
    name = getattr(exc, "sqlite_errorname", "")
    if name == "SQLITE_NOTADB":
        return f"is not a SQLite database (overwritten or encrypted?); {FIX}"
    if name.startswith("SQLITE_CORRUPT"):
        return is_corrupt(str(exc))
    if name.startswith("SQLITE_READONLY"):
        return (
            "read-only; bothost needs to write it (check the permissions and owner of the "
            "file, its -wal and -shm files and its directory)"
        )
    if name.startswith("SQLITE_CANTOPEN"):
        return f"cannot be opened ({exc}); check the permissions of its directory"
    if name == "SQLITE_FULL":
        return "the disk is full"
    if name == "SQLITE_BUSY":
        return "locked by another process for too long; try again"
    return str(exc)
