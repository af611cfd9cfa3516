"""One running turn per session across hosts that share a PostgreSQL store.

Two hosts behind one Slack app or load balancer can each receive a message of the same
conversation. Each turn reads the session's history and appends to it, so turns of one
session on two hosts at once would interleave their messages; this module makes a host wait
until the other host's turn in that session is over. While a host runs a turn it holds a
session advisory lock named after the session on its store connection (released by the
server if the host dies); a host that finds it taken polls until it is free or the turn's
time is up.

Inside one host nothing changes: its turns share its connection, and so the lock (a count
of them keeps it until the last one ends). On SQLite — one machine — this is a no-op.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from bothost.store.conn import POSTGRESQL

POLL = 0.2  # seconds between looks at another host's lock: a turn takes seconds anyway


class SessionBusyError(Exception):
    """Another host ran a turn in this session for longer than this one could wait."""


class SessionLocks:
    """The session locks this host holds, with how many of its turns use each."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.held: Counter[str] = Counter()  # touched on the store thread only
        self.waits = 0  # looks that found another host's turn running (tests watch it)

    @asynccontextmanager
    async def hold(self, session_id: str, wait: float) -> AsyncIterator[None]:
        """Run the body while no other host runs a turn in ``session_id``; wait at most
        ``wait`` seconds for one to end (:class:`SessionBusyError` after that)."""
        if self.store.dialect != POSTGRESQL:
            yield
            return
        name = f"turn:{session_id}"

        # both run on the store thread, one job at a time: the count and the lock agree
        def take(db: Any) -> bool:
            if not db.try_lock(name):
                return False
            self.held[name] += 1
            return True

        def give(db: Any) -> None:
            self.held[name] -= 1
            if not self.held[name]:
                del self.held[name]
                db.unlock(name)

        deadline = asyncio.get_running_loop().time() + wait
        while not await self._run_to_end(take, give):
            if asyncio.get_running_loop().time() >= deadline:
                raise SessionBusyError(
                    f"another host has been answering in {session_id} for {wait:g} s"
                )
            self.waits += 1
            await asyncio.sleep(POLL)
        try:
            yield
        finally:
            await self.store.run(give)

    async def _run_to_end(self, take: Any, give: Any) -> bool:
        """``take`` on the store thread; if we are cancelled meanwhile, a lock it took
        anyway is given back, never left behind."""
        job = asyncio.ensure_future(self.store.run(take))
        try:
            return await asyncio.shield(job)
        except asyncio.CancelledError:
            job.add_done_callback(lambda done: self._undo(done, give))
            raise

    def _undo(self, done: asyncio.Future[bool], give: Any) -> None:
        if not done.cancelled() and done.exception() is None and done.result():
            self.store.submit(give)
