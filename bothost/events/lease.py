"""The tick lease: a row in ``locks`` that lets one ticker at a time work on the queue.

A host and a ``bothost tick`` in another process share the database, so the lease lives
there, not in memory. Taking it is one write transaction (serialised across processes and
hosts): an expired row is replaced, a live one held by someone else means "busy". The holder
renews it while it works; a holder that dies (SIGKILL) simply stops renewing, and the row
expires after ``tick.lease``.
"""

from __future__ import annotations

import os
import socket
import uuid

from bothost.store.conn import Conn

TICK_LOCK = "tick"


def new_owner() -> str:
    """A unique, readable owner id: host, pid and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def acquire(db: Conn, name: str, owner: str, now: float, ttl: float) -> bool:
    """Take or renew the lease ``name`` until ``now + ttl``; False if another owner holds it."""
    with db.transaction() as conn:
        row = conn.execute("SELECT owner, expires_at FROM locks WHERE name = ?", (name,)).fetchone()
        if row and row[0] != owner and row[1] > now:
            return False
        conn.execute(
            "INSERT INTO locks (name, owner, expires_at) VALUES (?, ?, ?) ON CONFLICT (name)"
            " DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at",
            (name, owner, now + ttl),
        )
    return True


def release(db: Conn, name: str, owner: str) -> None:
    """Give the lease back (only if we still hold it)."""
    with db.transaction() as conn:
        conn.execute("DELETE FROM locks WHERE name = ? AND owner = ?", (name, owner))


def holder(db: Conn, name: str, now: float) -> str | None:
    """Who holds the lease right now, if anyone."""
    row = db.execute("SELECT owner, expires_at FROM locks WHERE name = ?", (name,)).fetchone()
    return row[0] if row and row[1] > now else None
