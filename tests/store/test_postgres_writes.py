"""The PostgreSQL write path's round trips, counted in libpq's own protocol trace: each
``ReadyForQuery`` the server sends ends one wait of the store thread for the network."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest

from bothost.store import Migration, Store, core_migrations, sql
from bothost.store.conn import WRITE_LOCK_KEY, PostgresConn

NOTES = "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"
INSERT = "INSERT INTO notes (body) VALUES (?) RETURNING id"


@pytest.fixture
def store(postgres_url):
    s = Store(postgres_url, core_migrations() + [Migration("notes", 1, sql(NOTES))])
    yield s
    s.close()


def round_trips(store: Store, fn, tmp_path: Path) -> tuple[object, int]:
    """``fn(conn)``'s result on the store thread, and how many round trips it took."""
    trace = tmp_path / "trace.txt"

    def traced(conn: PostgresConn):
        with trace.open("w") as out:
            conn.raw.pgconn.trace(out.fileno())
            conn.raw.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
            try:
                return fn(conn)
            finally:
                conn.raw.pgconn.untrace()

    result = store.call(traced)
    waits = [line for line in trace.read_text().splitlines() if "\tReadyForQuery" in line]
    return result, len(waits)


def test_a_one_statement_write_transaction_is_two_round_trips(store, tmp_path):
    def write(db):
        with db.transaction():
            return db.value(INSERT, ["one"])

    row_id, trips = round_trips(store, write, tmp_path)
    assert row_id == 1 and trips == 2  # BEGIN + the write lock + the INSERT, then COMMIT
    assert store.call(lambda db: db.value("SELECT body FROM notes")) == "one"


def test_a_transaction_that_runs_nothing_costs_nothing(store, tmp_path):
    def idle(db):
        with db.transaction():
            return db.in_transaction

    assert round_trips(store, idle, tmp_path) == (True, 0)


def test_the_write_lock_is_held_from_the_first_statement_to_the_commit(store, postgres_url):
    inside, release = threading.Event(), threading.Event()

    def hold(db):
        with db.transaction():
            db.value(INSERT, ["held"])
            inside.set()
            assert release.wait(10)

    holder = store.submit(hold)
    assert inside.wait(10)
    with psycopg.connect(postgres_url, autocommit=True) as other:
        taken = other.execute("SELECT pg_try_advisory_lock(%s)", [WRITE_LOCK_KEY]).fetchone()
        assert taken == (False,)
        release.set()
        holder.result(10)
        taken = other.execute("SELECT pg_try_advisory_lock(%s)", [WRITE_LOCK_KEY]).fetchone()
        assert taken == (True,)


def test_a_failing_first_statement_rolls_back_and_the_connection_goes_on(store):
    def bad(db):
        with db.transaction():
            db.execute("INSERT INTO notes (id, body) VALUES (?, ?)", ["not a number", "x"])

    with pytest.raises(psycopg.DataError):
        store.call(bad)

    def nested(db):
        with db.transaction():
            with pytest.raises(psycopg.DataError), db.transaction():
                db.execute("INSERT INTO notes (id) VALUES (?)", ["nan-id"])
            db.value(INSERT, ["after"])
        return db.query("SELECT body FROM notes"), db.in_transaction

    assert store.call(nested) == ([{"body": "after"}], False)
    assert (
        store.call(lambda db: db.raw.info.transaction_status) == psycopg.pq.TransactionStatus.IDLE
    )
