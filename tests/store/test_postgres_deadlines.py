"""Every connection bothost opens to PostgreSQL has deadlines: connecting, each statement,
a silent peer (keepalives) and data the peer never acknowledges (``tcp_user_timeout``:
keepalives are not sent while unacknowledged data waits, so without it a write into a dead
network waits for the kernel's retransmissions, about 15 minutes on Linux)."""

from __future__ import annotations

import asyncio
import logging

from bothost.crosshost import postgres as crosshost_postgres
from bothost.store import Store, core_migrations
from bothost.store import postgres as store_postgres
from tests.helpers import until

WANTED = {
    "connect_timeout": "10",
    "keepalives": "1",
    "tcp_user_timeout": str(store_postgres.TCP_USER_TIMEOUT_MS),
}


def deadlines(parameters: dict[str, str]) -> dict[str, str]:
    return {k: parameters.get(k, "(unset)") for k in WANTED}


def test_the_store_connection_has_every_deadline(postgres_url):
    store = Store(postgres_url, core_migrations())
    try:
        parameters = store.call(lambda db: db.raw.info.get_parameters())
        assert deadlines(parameters) == WANTED
        assert store.call(lambda db: db.value("SHOW statement_timeout")) == "2min"
    finally:
        store.close()


async def test_the_listener_connection_has_every_deadline(postgres_url):
    store = Store(postgres_url, core_migrations())
    listener = crosshost_postgres.PostgresCrossHost(store, "a")
    try:
        conn = await listener.connect()
        try:
            assert deadlines(conn.info.get_parameters()) == WANTED
        finally:
            await conn.close()
    finally:
        store.close()


async def test_a_listen_that_gets_no_answer_is_given_up_and_tried_again(
    postgres_url, monkeypatch, caplog
):
    """LISTEN runs outside the store (no statement_timeout there): its own deadline."""
    monkeypatch.setattr(crosshost_postgres, "LISTEN_TIMEOUT", 0.2)
    store = Store(postgres_url, core_migrations())
    listener = crosshost_postgres.PostgresCrossHost(store, "a")
    connect = listener.connect
    hung = asyncio.Event()

    class Unanswered:  # a real connection whose first statement is never answered
        def __init__(self, conn):
            self.conn = conn

        async def execute(self, *args):
            hung.set()
            await asyncio.Event().wait()

        async def close(self):
            await self.conn.close()

    attempts = []

    async def first_hangs():
        attempts.append(1)
        conn = await connect()
        return Unanswered(conn) if len(attempts) == 1 else conn

    listener.connect = first_hangs
    caplog.set_level(logging.WARNING, logger="bothost.crosshost")
    await listener.start()
    try:
        await until(lambda: listener.listening, timeout=10)
        assert len(attempts) == 2 and hung.is_set()
        assert "cannot connect" in caplog.text
    finally:
        await listener.stop()
        store.close()
