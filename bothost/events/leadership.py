"""Leadership: which one of several hosts sharing a store runs what must run only once.

The leader runs the scheduled ticks and the MCP servers that push events (see
:mod:`bothost.mcp.placement`); every host serves people, webhooks and the other servers.
Leadership is the lease ``leader`` in ``locks`` (:mod:`bothost.events.lease`), held by one
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

from bothost.events import lease
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

    @property
    def period(self) -> float:
        return min(self.ttl / RENEWALS_PER_LEASE, MAX_PERIOD)

    def listen(self, listener: Listener) -> None:
        """Call ``await listener(leading)`` whenever leadership changes."""
        self._listeners.append(listener)

    async def check(self) -> bool:
        """Take or renew the lease once; whether this process leads now."""
        now = self.clock()

        def attempt(db: Any) -> bool:
            if self.clock() > now + self.period:  # waited out below: the caller has moved on
                return False
            return lease.acquire(db, LEADER_LOCK, self.owner, now, self.ttl, force=not self.shared)

        try:
            # a store that hangs (a stalled connection) must not keep a leader believing it
            # leads while its row runs out and another host takes over
            async with asyncio.timeout(self.period):
                held = await self.store.run(attempt)
        except Exception:  # the store is away: lead on only while our row surely stands
            logger.exception("renewing leadership failed")
            held = self.leading and self.clock() < self._renewed_at + self.ttl - self.period
        else:
            if held:
                self._renewed_at = now
        await self._become(held)
        return held

    async def run_forever(self) -> None:
        """Check every period until cancelled."""
        while True:
            await self.check()
            await asyncio.sleep(self.period)

    async def resign(self) -> None:
        """Give leadership back at once (the host stops): another host takes it at its next
        try instead of waiting for the lease to expire."""
        was = self.leading
        await self._become(False)
        if was:
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
