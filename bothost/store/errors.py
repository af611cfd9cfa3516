"""The store's error types, apart from the modules that raise them to avoid import cycles."""

import sqlite3

import psycopg


class StoreError(Exception):
    """The database could not be opened or migrated; the message names it and why."""


# What either backend's driver raises for a statement or the database itself: the
# DB-API classes of sqlite3 and psycopg (both have Error, DatabaseError, IntegrityError, …).
DATABASE_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, psycopg.Error)
DATABASE_FAILURES: tuple[type[Exception], ...] = (sqlite3.DatabaseError, psycopg.DatabaseError)
# What one row's own values can raise (a constraint, a value the database refuses), as
# opposed to the store failing (disk, locks, a lost connection).
ROW_ERRORS: tuple[type[Exception], ...] = (
    sqlite3.DataError,
    sqlite3.IntegrityError,
    sqlite3.InterfaceError,
    sqlite3.ProgrammingError,
    psycopg.DataError,
    psycopg.IntegrityError,
)
