"""Long-running tasks under one owner: each restarted with backoff when it fails.

One broken platform loop or watcher must never take the others down, so each task catches
its own failure, logs it with the task's name, waits (1 s doubling to 60 s) and runs again.
A task that returns normally is done. ``stop`` cancels them all.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

logger = logging.getLogger(__name__)

FIRST_BACKOFF = 1.0
MAX_BACKOFF = 60.0


class Supervisor:
    def __init__(self) -> None:
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.failures: dict[str, int] = {}

    def spawn(self, name: str, factory: Callable[[], Awaitable[Any]]) -> None:
        if name in self.tasks and not self.tasks[name].done():
            raise ValueError(f"task {name!r} is already running")
        self.tasks[name] = asyncio.create_task(self._keep(name, factory), name=name)

    async def _keep(self, name: str, factory: Callable[[], Awaitable[Any]]) -> None:
        delay = FIRST_BACKOFF
        while True:
            try:
                await factory()
                return
            except asyncio.CancelledError:
                raise
            except Exception:
                self.failures[name] = self.failures.get(name, 0) + 1
                logger.exception("task %s failed; restarting in %.0f s", name, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF)

    def status(self) -> dict[str, str]:
        return {n: ("running" if not t.done() else "done") for n, t in self.tasks.items()}

    async def stop(self) -> None:
        for task in self.tasks.values():
            task.cancel()
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)
        self.tasks.clear()
