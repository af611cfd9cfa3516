"""What happens to a platform's message before its turn: delivery dedupe and queueing.

Platforms only translate their wire to an :class:`~bothost.models.IncomingMessage` and back;
the host decides the rest, in one place for all of them. A message that carries a
``delivery`` id is taken once: the id is recorded in the store (``platform_deliveries``),
so a retry that reaches another host sharing it, or this host after a restart, is refused
as well. A :class:`~bothost.platform.Serial` platform's session takes one message at a
time: the next waits here, in arrival order, until the turn before it has ended (across
hosts, :mod:`bothost.agent.sessionlock` adds its own wait). Stop words never wait here:
:meth:`bothost.host.host.Host.handle_message` handles them first.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from bothost.models import IncomingMessage
from bothost.queries import Queries


class Inbox:
    """The delivery records and the per-session queues of one host."""

    def __init__(self, queries: Queries, clock: Callable[[], float] = time.time) -> None:
        self.queries = queries
        self.clock = clock  # when a delivery was taken (store rows; tests move it)
        self.locks: dict[str, asyncio.Lock] = {}  # by session id, while anyone holds or waits
        self.waiting: dict[str, int] = {}
        self.refused = 0  # deliveries refused as repeats (tests and counters read it)

    async def take(self, message: IncomingMessage, keep: float) -> bool:
        """Whether ``message``'s delivery is new to every host sharing the store; it is
        recorded either way, for ``keep`` seconds. A message without a delivery id is new."""
        if message.delivery is None:
            return True
        platform = message.address.platform
        new = await self.queries.claim_delivery(platform, [message.delivery], self.clock(), keep)
        if not new:
            self.refused += 1
        return new

    async def release(self, message: IncomingMessage) -> None:
        """Forget ``message``'s delivery: nothing was answered, so a retry may run it."""
        if message.delivery is not None:
            await self.queries.forget_delivery(message.address.platform, message.delivery)

    @asynccontextmanager
    async def place(self, session_id: str) -> AsyncIterator[None]:
        """Hold ``session_id``'s one place: wait for the message before to be done."""
        lock = self.locks.setdefault(session_id, asyncio.Lock())
        self.waiting[session_id] = self.waiting.get(session_id, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self.waiting[session_id] -= 1
            if not self.waiting[session_id]:  # nobody else queued: forget the session's lock
                del self.waiting[session_id], self.locks[session_id]
