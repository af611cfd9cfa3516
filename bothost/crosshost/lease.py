"""The tick lease: a row in ``locks`` that lets one ticker at a time work on the queue.

A host and a ``bothost tick`` in another process share the database, so the lease lives
there, not in memory. Taking it is one write transaction (serialised across processes and
hosts): an expired row is replaced, a live one held by someone else means "busy". The holder
renews it while it works; a holder that dies (SIGKILL) simply stops renewing, and the row
expires after ``tick.lease``.

On PostgreSQL the holder also takes a session advisory lock of its connection
(:meth:`~bothost.store.conn.Conn.try_lock`), which the server drops the moment the holder's
process or connection dies: whoever then gets the lock takes the lease at once, without
waiting for the dead holder's row to expire. The row stays the authority otherwise — an
expired row is taken over even while a hung holder keeps its lock, and owners inside one
process (which share the connection, and so the lock) are told apart by it.

The owner id is unique per holding (:func:`new_owner`), so it is also a **fencing token**:
every step of a tick that decides something (claiming, recording triage, settling a
briefing) and every send checks, in its own write transaction, that the row still names it
(:func:`fence`, :func:`renew`). Wall clocks decide only when a row counts as expired, and
a holder that stalls longer than ``tick.lease`` (a suspended VM, a hung disk) comes back to a
lease another runner has taken. The holder then learns it at its next step and stops; at
most the one send already in flight goes out twice.

Expiry is judged by one clock for everyone who shares the row (:func:`store_time`): on
PostgreSQL the database server's, so hosts whose own clocks disagree by more than a lease do
not keep taking the lease from each other; on SQLite the caller's injected clock, since every
process on one file reads the same machine's clock. That clock jumps too: renewing never
shortens the expiry others were promised, and a row expiring more than one lease after our
reading — written before the clock went back, or by a host of an older bothost that judged by
its own clock — is cut to one lease from now rather than honoured for as long as the jump.
"""

from __future__ import annotations

import os
import socket
import uuid

from bothost.store.conn import POSTGRESQL, Conn

TICK_LOCK = "tick"


class LeaseLostError(Exception):
    """Another runner holds the lease now: this one must stop deciding and sending."""


def new_owner() -> str:
    """A unique, readable owner id: host, pid and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def acquire(
    db: Conn, name: str, owner: str, now: float, ttl: float, *, force: bool = False
) -> bool:
    """Take or renew the lease ``name`` until ``now + ttl``; False if another owner holds it.

    With ``force`` the lease is taken whoever holds it (a SQLite host, the only one on its
    file, is always the leader: see :mod:`bothost.crosshost.leadership`). ``now`` is the
    caller's clock, read only on SQLite (:func:`store_time`)."""
    with db.transaction() as conn:
        now = store_time(conn, now)
        held = conn.holds(name)
        # newly locked: whoever held the lock before us is gone, and so is their lease
        inherited = conn.try_lock(name) and not held and conn.dialect == POSTGRESQL
        row = conn.execute("SELECT owner, expires_at FROM locks WHERE name = ?", (name,)).fetchone()
        if row and row[0] != owner and row[1] > now and not inherited and not force:
            if row[1] > now + ttl:  # no holder agreeing with our clock wrote this: see above
                conn.execute(
                    "UPDATE locks SET expires_at = ? WHERE name = ? AND owner = ?",
                    (now + ttl, name, row[0]),
                )
            return False
        conn.execute(
            "INSERT INTO locks (name, owner, expires_at) VALUES (?, ?, ?) ON CONFLICT (name)"
            " DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at",
            (name, owner, now + ttl),
        )
    return True


def renew(db: Conn, name: str, owner: str, now: float, ttl: float) -> bool:
    """Extend our lease to ``now + ttl`` (never shorter than it was); False if the row no
    longer names ``owner`` — someone took it over, or it was released (``now``: as for
    :func:`acquire`)."""
    with db.transaction() as conn:
        now = store_time(conn, now)
        return bool(
            conn.execute(
                "UPDATE locks SET expires_at = CASE WHEN expires_at > ? THEN expires_at ELSE ?"
                " END WHERE name = ? AND owner = ?",
                (now + ttl, now + ttl, name, owner),
            ).rowcount
        )


def fence(conn: Conn, name: str, owner: str) -> None:
    """Raise :class:`LeaseLostError` unless ``owner`` holds the lease; call it inside the
    write transaction whose writes it guards (writers are serialised on both backends, so
    no takeover can fall between the check and the writes)."""
    if conn.value("SELECT owner FROM locks WHERE name = ?", (name,)) != owner:
        raise LeaseLostError(f"the {name} lease is no longer held by {owner}")


def release(db: Conn, name: str, owner: str) -> None:
    """Give the lease back (only if we still hold it)."""
    with db.transaction() as conn:
        conn.execute("DELETE FROM locks WHERE name = ? AND owner = ?", (name, owner))
        row = conn.execute("SELECT owner FROM locks WHERE name = ?", (name,)).fetchone()
        if row is None or process_of(row[0]) != process_of(owner):
            conn.unlock(name)  # no owner in this process holds it any more


def process_of(owner: str) -> str:
    """The host and pid part of an owner id (see :func:`new_owner`)."""
    return owner.rsplit(":", 1)[0]


def holder(db: Conn, name: str, now: float) -> str | None:
    """Who holds the lease right now, if anyone (``now``: as for :func:`acquire`)."""
    row = db.execute("SELECT owner, expires_at FROM locks WHERE name = ?", (name,)).fetchone()
    return row[0] if row and row[1] > store_time(db, now) else None


def store_time(conn: Conn, local: float) -> float:
    """The time leases expire by, in seconds since the epoch: the database server's clock on
    PostgreSQL, shared by every host on it whatever their own clocks say; ``local`` (the
    caller's clock, injected in tests) on SQLite, whose processes share one machine's clock.
    """
    if conn.dialect != POSTGRESQL:
        return local
    # clock_timestamp(), not now(): now() is when the transaction began, before its wait
    # for the write lock, and a lease written from it would be shorter by that wait
    return float(conn.value("SELECT extract(epoch FROM clock_timestamp())"))
