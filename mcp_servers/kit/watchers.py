"""Background watchers: coroutines that look at the outside world and push `event/*`.

Each watcher runs once as soon as the first client has finished the handshake (so its
first notification cannot race `initialize`), then every interval. The interval comes
from an environment variable when set (`GMAIL_POLL_SECONDS=30`), else the default. A
failing run is logged with its traceback on stderr and the watcher tries again at the next
interval: one bad poll must not silence a server for the rest of its life.

Every watcher sends through an `Outbox`, which holds the one rule on delivery: an event is
sent only when a client got it, and a watcher remembers an event as sent only then.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import Server

logger = logging.getLogger(__name__)

# A poll faster than this would hammer the APIs the bundled servers talk to.
MIN_INTERVAL_SECONDS = 0.05

WatchFunction = Callable[["Server"], Awaitable[None]]
"""A watcher's body: `async def fn(server)`, one look at the outside world."""
Notify = Callable[[str, dict[str, Any]], Awaitable[int]]
"""`Server.notify`: push one notification, return how many clients got it."""


class Outbox:
    """One poll's events, each counted as sent only once a client received it.

    A watcher records an event as sent (moves its position, saves its state) only after
    `send` returned True. When no client got an event (none is connected, or the only one
    is an HTTP client with no stream open for pushed messages), the outbox stays closed for
    the rest of the poll: later events are not sent either, so none overtakes the one that
    waits, and the watcher keeps its old position so that its next poll finds them again.
    """

    def __init__(self, notify: Notify) -> None:
        self._notify = notify
        self.sent = 0
        self.closed = False

    async def send(self, method: str, params: dict[str, Any]) -> bool:
        """Push one event; True when at least one client got it."""
        if self.closed:
            return False
        if await self._notify(method, params):
            self.sent += 1
            return True
        self.closed = True
        logger.info("%s %s reached no client; kept for the next poll", method, params.get("id"))
        return False


@dataclass
class Watcher:
    """A registered watcher function and where its interval comes from."""

    fn: WatchFunction
    interval_env: str | None
    default_interval: float

    @property
    def name(self) -> str:
        return getattr(self.fn, "__name__", "watcher")

    def interval(self) -> float:
        """Seconds between runs: `$interval_env` if it is a number, else the default."""
        raw = os.environ.get(self.interval_env) if self.interval_env else None
        if raw:
            try:
                return max(MIN_INTERVAL_SECONDS, float(raw))
            except ValueError:
                logger.warning(
                    "%s=%r is not a number; using %s s",
                    self.interval_env,
                    raw,
                    self.default_interval,
                )
        return max(MIN_INTERVAL_SECONDS, float(self.default_interval))

    async def run_forever(self, server: Server) -> None:
        interval = self.interval()
        logger.info("watcher %s: every %s s", self.name, interval)
        while True:
            try:
                await self.fn(server)
            except asyncio.CancelledError:
                raise
            except Exception:  # boundary: keep watching after a failed poll
                logger.exception("watcher %s failed; next try in %s s", self.name, interval)
            await asyncio.sleep(interval)
