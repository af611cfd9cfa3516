"""Cross-host messages over PostgreSQL ``LISTEN/NOTIFY`` (see :mod:`bothost.crosshost`).

Publishing is ``pg_notify`` on the store's connection and thread, in the transaction of the
write it announces: PostgreSQL delivers it at commit, so no listener looks before the row is
there. Listening needs a connection of its own — the store's runs one job after another and
cannot wait for notices — so each host keeps one psycopg async connection on its event loop,
named :data:`APPLICATION_NAME` (which is also how a host counts the others listening).

That connection can drop (a server restart or failover, ``pg_terminate_backend``, a network
gone; TCP keepalives notice a silent peer within about 25 s, and ``tcp_user_timeout`` a
peer that stops acknowledging within 30 s). The listener logs it, connects
again with a growing pause, logs that it listens again, and then runs every subscriber's
``resync``: notices sent while it was away are gone, and the store says what they were.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from bothost.api import Notice
from bothost.crosshost import CrossHostBase, encode
from bothost.redact import redact
from bothost.store.postgres import CONNECT_TIMEOUT, KEEPALIVES, driver

logger = logging.getLogger("bothost.crosshost")

CHANNEL = "bothost"  # one channel per database (NOTIFY's scope); the topic is in the payload
APPLICATION_NAME = "bothost-crosshost"  # every host's listener, in pg_stat_activity
FIRST_RETRY = 0.2  # seconds before reconnecting: a restarted server is usually back at once
MAX_RETRY = 10.0  # seconds between attempts while the server stays away
READY_WAIT = 5.0  # seconds start() waits for the first LISTEN; the listener keeps trying
CLOSE_WAIT = 5.0  # seconds to close a connection (a dead peer must not hold up shutdown)
# LISTEN runs on the listener's own connection, outside the store's statement_timeout; it
# answers at once on a live server, so one that does not answer within this is gone.
LISTEN_TIMEOUT = 10.0


class PostgresCrossHost(CrossHostBase):
    """Notices between the hosts on one PostgreSQL database."""

    shared = True  # other hosts may be listening

    def __init__(self, store: Any, origin: str) -> None:
        super().__init__(store, origin)
        self.url: str = store.backend.url
        self.listening = False
        self.backend_pid: int | None = None  # the listener's server process, while listening
        self.lost_since: float | None = None  # time.monotonic() when listening last stopped
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Event | None = None

    async def publish(
        self, topic: str, data: dict[str, Any], write: Callable[[Any], Any] | None = None
    ) -> Any:
        payload = encode(topic, data, self.origin)

        def job(db: Any) -> Any:
            if write is None:
                db.execute("SELECT pg_notify(?, ?)", [CHANNEL, payload])
                return None
            with db.transaction():
                result = write(db)
                db.execute("SELECT pg_notify(?, ?)", [CHANNEL, payload])
            return result

        result = await self.store.run(job)
        await self.subscribers.deliver(Notice(topic, data, here=True))
        return result

    async def peers(self) -> int:
        """How many other hosts (or CLI processes running turns) are listening now."""

        def count(db: Any) -> int:
            return int(
                db.value(
                    "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND application_name = ? AND pid <> ?",
                    [APPLICATION_NAME, self.backend_pid or 0],
                )
                or 0
            )

        return await self.store.run(count)

    def health(self) -> dict[str, Any]:
        """For ``/healthz``: not ok while the listener is away (notices from other hosts wait
        for its return and the store's re-read)."""
        report: dict[str, Any] = {"ok": self.listening, "shared": True}
        if self.lost_since is not None:
            report["lost_for"] = round(time.monotonic() - self.lost_since, 1)
        return report

    # --- the listener -----------------------------------------------------------------------

    async def start(self) -> None:
        self._ready = asyncio.Event()
        self._task = asyncio.create_task(self._listen_forever(), name="bothost-crosshost")
        try:
            async with asyncio.timeout(READY_WAIT):
                await self._ready.wait()
        except TimeoutError:
            logger.warning(
                "cross-host listener not connected after %g s; going on, it keeps trying",
                READY_WAIT,
            )

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait([self._task], timeout=CLOSE_WAIT)
            self._task = None

    async def connect(self) -> Any:
        """A new autocommit connection for listening (a test may hold it back)."""
        psycopg = driver()
        async with asyncio.timeout(CONNECT_TIMEOUT + 5):  # libpq's own timeout, then ours
            return await psycopg.AsyncConnection.connect(
                self.url,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT,
                application_name=APPLICATION_NAME,
                **KEEPALIVES,
            )

    async def _listen_forever(self) -> None:
        psycopg = driver()
        delay = FIRST_RETRY
        attempts = 0
        while True:
            conn = None
            try:
                attempts += 1
                conn = await self.connect()
                async with asyncio.timeout(LISTEN_TIMEOUT):
                    await conn.execute(f"LISTEN {CHANNEL}")
                self.backend_pid = conn.info.backend_pid
                if self.lost_since is not None:
                    logger.warning(
                        "cross-host listener listening again after %.1f s (%d attempts);"
                        " reading what may have been missed",
                        time.monotonic() - self.lost_since,
                        attempts,
                    )
                self.listening, self.lost_since = True, None
                attempts, delay = 0, FIRST_RETRY
                assert self._ready is not None
                self._ready.set()
                await self.subscribers.resync()  # also on the first: covers the start-up gap
                async for note in conn.notifies():  # waits for good; keepalives find a dead peer
                    await self._receive(note.payload)
            except (psycopg.Error, OSError, TimeoutError) as exc:  # expected: reconnect
                if self.listening:
                    logger.warning(
                        "cross-host listener lost its connection (%s); reconnecting",
                        self.reason(exc),
                    )
                elif attempts == 1 or attempts % 10 == 0:
                    logger.warning(
                        "cross-host listener cannot connect (%s); retrying", self.reason(exc)
                    )
            except Exception:  # boundary: a bug here must not end listening for good
                logger.exception("cross-host listener failed; reconnecting")
            finally:
                if self.listening or self.lost_since is None:
                    self.lost_since = time.monotonic()  # from here notices may be missed
                self.listening = False
                if conn is not None:
                    await self._close(conn)
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_RETRY)

    async def _receive(self, payload: str) -> None:
        try:
            envelope = json.loads(payload)
            topic, origin, data = envelope["topic"], envelope["from"], envelope["data"]
        except (ValueError, KeyError, TypeError):
            logger.warning("cross-host listener: not a bothost notice, ignored: %.200r", payload)
            return
        if origin == self.origin:
            return  # published here: this host's subscribers already have it
        await self.subscribers.deliver(Notice(topic, data, here=False))

    def reason(self, exc: BaseException) -> str:
        """One line for psycopg's (often multi-line) error, the URL's password masked."""
        text = " ".join(str(exc).split()) or type(exc).__name__
        return redact(text.replace(self.url, self.store.label))

    async def _close(self, conn: Any) -> None:
        try:
            async with asyncio.timeout(CLOSE_WAIT):
                await conn.close()
        except Exception:  # closing a dead connection: nothing left to save
            logger.debug("closing the cross-host listener's connection failed", exc_info=True)
