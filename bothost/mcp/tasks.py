"""Background tasks an MCP component keeps alive: referenced, logged when they fail, cancelled.

asyncio holds only weak references to tasks, so an owner must keep them; and a task that
fails with nobody awaiting it would lose its exception. One small set type does both for the
transports, the inbound handler and the manager.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Iterator
from typing import Any


class TaskSet:
    def __init__(self, log: logging.Logger, what: str = "background task") -> None:
        self.log = log
        self.what = what
        self._tasks: set[asyncio.Future[Any]] = set()

    def spawn(self, awaitable: Awaitable[Any]) -> asyncio.Future[Any]:
        task = asyncio.ensure_future(awaitable)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.log.error("%s failed", self.what, exc_info=task.exception())

    def __iter__(self) -> Iterator[asyncio.Future[Any]]:
        return iter(list(self._tasks))

    async def wait(self) -> None:
        await asyncio.gather(*self._tasks, return_exceptions=True)
