"""Leadership: which one of several hosts sharing a store runs what must run only once.

The leader runs the scheduled ticks and the MCP servers that push events (see
:mod:`bothost.mcp.placement`); every host serves people, webhooks and the other servers.
Leadership is the lease ``leader`` in ``locks`` (:mod:`bothost.crosshost.lease`), held by one
``bothost run`` process and renewed every :attr:`Leadership.period` — a few times per
``tick.lease``, and at least every :data:`MAX_PERIOD` seconds. The others try to take it just
as often, so a host notices that it gained or lost leadership within one period:

* on PostgreSQL the lease is also a session advisory lock, which the server drops the moment
  the leader's process or connection dies: a SIGKILLed leader is replaced at the next try of
  another host, well within one lease. A leader that is alive but cannot reach the store
  gives leadership up itself before its row could expire (:meth:`Leadership.check`), so two
  hosts never both believe they lead;
* on SQLite the one host on the file is always the leader: it takes the lease whoever held it
  (a host restarted after a crash must not wait for its own dead row to expire).

Listeners (``on_change(leading)``) are awaited in order on every change, so the MCP manager
has started or stopped the push servers before the next check. The ticks themselves still
take the ``tick`` lease, which keeps ``bothost tick`` in another process and an urgent tick
on any host from overlapping the leader's.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bothost.crosshost import lease
from bothost.store.conn import POSTGRESQL

logger = logging.getLogger(__name__)

LEADER_LOCK = "leader"
RENEWALS_PER_LEASE = 3  # renew well before expiry even if one renewal is slow
# Followers try this often at most, so a dead leader's push servers come back within seconds
# on PostgreSQL even with the default 5 min lease (a try is one small transaction).
MAX_PERIOD = 5.0
Listener = Callable[[bool], Awaitable[Any]]


class Leadership:
    """This process's part in leadership: try or renew, and tell listeners of changes."""

    def __init__(self, store: Any, ttl: float, *, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.ttl = ttl
        self.clock = clock
        self.owner = lease.new_owner()
        self.shared = store.dialect == POSTGRESQL  # SQLite: one host per file, always leader
        self.leading = False
        self._renewed_at = float("-inf")  # when the lease was last taken or renewed
        self._listeners: list[Listener] = []
        self._trying: asyncio.Future[float | None] | None = None  # a try the store has not answered

    @property
    def period(self) -> float:
        return min(self.ttl / RENEWALS_PER_LEASE, MAX_PERIOD)

    def listen(self, listener: Listener) -> None:
        """Call ``await listener(leading)`` whenever leadership changes."""
        self._listeners.append(listener)

    async def check(self) -> bool:
        """Take or renew the lease once; whether this process leads now.

        The try is a job on the store thread, which a loaded store starts late: it tries
        whenever it starts, from the clock then (the row runs from when it was written). The
        check waits for it one period at most; a try still queued then stays queued, and the
        next check takes up its outcome instead of queuing another behind it."""
        if self._trying is None:
            self._trying = asyncio.ensure_future(self.store.run(self._try))
        trying = self._trying
        try:
            # a store that hangs (a stalled connection) must not keep a leader believing it
            # leads while its row runs out and another host takes over
            async with asyncio.timeout(self.period):
                taken_at = await asyncio.shield(trying)
        except TimeoutError:
            logger.warning(
                "renewing leadership: the store has not answered within %gs", self.period
            )
            held = self._row_stands()
        except Exception:  # the store is away: lead on only while our row surely stands
            self._trying = None
            logger.exception("renewing leadership failed")
            held = self._row_stands()
        else:
            self._trying = None
            if taken_at is not None:
                self._renewed_at = max(self._renewed_at, taken_at)
                held = self._row_stands(leading=True)
            else:
                held = False
        await self._become(held)
        return held

    def _try(self, db: Any) -> float | None:
        """Take or renew the lease (store thread): when, by our clock, or None if not."""
        now = self.clock()
        if lease.acquire(db, LEADER_LOCK, self.owner, now, self.ttl, force=not self.shared):
            return now
        return None

    def _row_stands(self, leading: bool | None = None) -> bool:
        """Whether our row surely stands for longer than one more period (we may lead)."""
        leading = self.leading if leading is None else leading
        return leading and self.clock() < self._renewed_at + self.ttl - self.period

    async def run_forever(self) -> None:
        """Check every period until cancelled."""
        while True:
            await self.check()
            await asyncio.sleep(self.period)

    async def resign(self) -> None:
        """Give leadership back at once (the host stops): another host takes it at its next
        try instead of waiting for the lease to expire."""
        was = self.leading
        trying, self._trying = self._trying, None
        if trying is not None:  # withdrawn while queued; one already running may take the row
            if not trying.cancel() and not trying.cancelled():
                trying.exception()  # its failure was logged by no check: seen, not re-raised
        await self._become(False)
        if was or trying is not None:
            try:
                await self.store.run(lambda db: lease.release(db, LEADER_LOCK, self.owner))
            except Exception:  # the row expires by itself
                logger.exception("giving leadership back failed")

    async def holder(self) -> str | None:
        """The owner id of whichever process leads now, if any."""
        return await self.store.run(lambda db: lease.holder(db, LEADER_LOCK, self.clock()))

    async def _become(self, leading: bool) -> None:
        if leading == self.leading:
            return
        self.leading = leading
        # news only where several hosts share the store: on SQLite this host always leads
        level = logging.INFO if self.shared else logging.DEBUG
        logger.log(level, "%s leadership (%s)", "took" if leading else "lost", self.owner)
        for listener in self._listeners:
            try:
                await listener(leading)
            except Exception:  # boundary: one listener failing must not stop the others
                logger.exception("a leadership listener failed")
