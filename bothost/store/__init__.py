"""The store: SQLite (one file, the default) or PostgreSQL, one interface, one writer thread.

How code talks to the database — the form every SQL call site follows, core and plugins:

* A store function is a plain sync function of a :class:`Conn`, run on the store thread:
  ``await store.run(lambda conn: fn(conn, …))`` (or ``store.call`` from sync code), or
  ``store.post(fn, what)`` for bookkeeping nobody waits on (jobs run in order, so any later
  job sees it; a failure is logged).
* SQL is written once for both backends: ``?`` parameters (or ``:name`` with a dict),
  ``INSERT … ON CONFLICT (…) DO NOTHING / DO UPDATE SET x = excluded.x`` (never ``INSERT OR
  IGNORE/REPLACE``), ``RETURNING id`` (never ``lastrowid``), REAL epoch seconds for times,
  TEXT holding JSON (decoded in Python, no ``json_extract``), 0/1 integers for flags, ``IN
  ({conn.ids})`` with ``json.dumps(ids)`` for a list of ids, and quote a column named like a
  keyword (``"user"``). No SQLite-only functions, no sqlite_utils helpers.
* Reading: ``conn.execute(sql, params)`` → :class:`Rows` (tuples), ``conn.query`` → dicts,
  ``conn.one`` → one dict or None, ``conn.value`` → one value or None.
* Writing several statements atomically: ``with conn.transaction(): …`` (serialised across
  processes and hosts on both backends; nested ones are savepoints).
* Migrations: ``Migration(component, number, sql(DDL), name)`` with DDL in SQLite's type
  names (``INTEGER PRIMARY KEY``, ``INTEGER``, ``REAL``, ``TEXT``), which PostgreSQL reads as
  their 64-bit equivalents; branch on ``conn.dialect`` only where the two must differ.
"""

from bothost.store.conn import Conn, Rows
from bothost.store.db import Store
from bothost.store.errors import StoreBusyError, StoreError, database_errors
from bothost.store.migrations import Migration, core_migrations, sql

__all__ = [
    "Store",
    "StoreError",
    "StoreBusyError",
    "Migration",
    "core_migrations",
    "sql",
    "Conn",
    "Rows",
    "database_errors",
]
