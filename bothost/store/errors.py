"""The store's error types, apart from the modules that raise them to avoid import cycles.

What either backend's driver raises is given by functions, not constants, evaluated where an
``except`` clause meets an exception: psycopg's classes join sqlite3's only once the
PostgreSQL backend has imported psycopg. A process that never opened PostgreSQL cannot meet
them, and importing psycopg for every command cost a fifth of ``bothost chat``'s start
(issue 19).
"""

import sqlite3
import sys


class StoreError(Exception):
    """The database could not be opened or migrated; the message names it and why."""


class StoreCorruptError(StoreError):
    """The SQLite file is damaged: found at open, or met before and refused since; the
    message names the file and the way out (:mod:`bothost.store.corruption`)."""


class StoreBusyError(Exception):
    """A job was withdrawn before it started, its caller's bound run out while the store
    thread was busy with others: nothing of it was written; the message names the job."""


def _psycopg(*names: str) -> tuple[type[Exception], ...]:
    driver = sys.modules.get("psycopg")
    return tuple(getattr(driver, name) for name in names) if driver is not None else ()


def database_errors() -> tuple[type[Exception], ...]:
    """What a statement or the database itself raises (the DB-API ``Error`` of each driver,
    and a corrupt store's refusal of the statement)."""
    return (sqlite3.Error, StoreCorruptError, *_psycopg("Error"))


def database_failures() -> tuple[type[Exception], ...]:
    """The database failing (``DatabaseError``), as opposed to the program misusing it."""
    return (sqlite3.DatabaseError, StoreCorruptError, *_psycopg("DatabaseError"))


def row_errors() -> tuple[type[Exception], ...]:
    """What one row's own values can raise (a constraint, a value the database refuses), as
    opposed to the store failing (disk, locks, a lost connection)."""
    return (
        sqlite3.DataError,
        sqlite3.IntegrityError,
        sqlite3.InterfaceError,
        sqlite3.ProgrammingError,
        *_psycopg("DataError", "IntegrityError"),
    )
