"""What happens to a platform's message before its turn: delivery dedupe and queueing.

Platforms only translate their wire to an :class:`~bothost.models.IncomingMessage` and back;
the host decides the rest, in one place for all of them. A message that carries a
``delivery`` id is taken once: the id is recorded in the store (``platform_deliveries``),
so a retry that reaches another host sharing it, or this host after a restart, is refused
as well. A :class:`~bothost.platform.Serial` platform's session takes one message at a
time: the next waits here, in arrival order, until the turn before it has ended (across
hosts, :mod:`bothost.agent.sessionlock` adds its own wait). Stop words never wait here:
:meth:`bothost.host.host.Host.handle_message` handles them first.

Events sent with a once-only id (a webhook's ``webhook-id``) have their own front,
:class:`OnceIds`: the id's record is written with the event (the queue's group commit), and
this process serialises requests carrying one id and remembers the ids it knows are
recorded, so a sender's retry storm costs no store read.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from bothost.models import IncomingMessage
from bothost.queries import Queries

RECENT_IDS = 10_000  # once-only ids known to be recorded, answered without a store read
# Standard Webhooks senders retry for days (Svix: about five): ids are kept a bit longer
ONCE_ID_RETENTION = 7 * 24 * 3600
PRUNE_EVERY = 3600.0  # seconds between deletions of expired once-only ids


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


class OnceIds:
    """This process's front to the store's record of once-only event ids."""

    def __init__(self, queries: Queries, clock: Callable[[], float] = time.time) -> None:
        self.queries = queries
        self.clock = clock
        # per id being handled, the requests with the same id waiting for it to finish
        self.inflight: dict[str, list[asyncio.Future[None]]] = {}
        self.recent: OrderedDict[str, None] = OrderedDict()
        self.pruned_at = 0.0

    async def enter(self, once_id: str) -> None:
        """Wait until no other request with ``once_id`` is being handled; then it is ours."""
        while (waiting := self.inflight.get(once_id)) is not None:
            turn = asyncio.get_running_loop().create_future()
            waiting.append(turn)
            await turn
        self.inflight[once_id] = []

    def leave(self, once_id: str) -> None:
        for turn in self.inflight.pop(once_id):
            if not turn.done():  # a cancelled waiter has gone
                turn.set_result(None)

    def known(self, once_id: str) -> bool:
        """Whether ``once_id`` is known here to be recorded (a duplicate, no read needed)."""
        return once_id in self.recent

    def note(self, once_id: str) -> None:
        """Keep ``once_id`` among the ids known to be recorded."""
        self.recent[once_id] = None
        if len(self.recent) > RECENT_IDS:
            self.recent.popitem(last=False)

    async def prune(self) -> None:
        """Forget ids older than :data:`ONCE_ID_RETENTION`, at most once per
        :data:`PRUNE_EVERY`."""
        now = self.clock()
        if now - self.pruned_at > PRUNE_EVERY:
            self.pruned_at = now
            await self.queries.forget_webhooks(before=now - ONCE_ID_RETENTION)
