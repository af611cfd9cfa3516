"""The SQLite store: one file, WAL, numbered migrations, one writer per process."""

from bothost.store.db import Store
from bothost.store.errors import StoreError
from bothost.store.migrations import Migration, core_migrations

__all__ = ["Store", "StoreError", "Migration", "core_migrations"]
