"""Running a watcher's poll when the Google token may be missing or revoked.

Without this, a token that expired (Testing-mode apps lose theirs after 7 days) would put a
traceback in the log at every poll and leave the user none the wiser. Instead the watcher
logs one warning and pushes one `event/auth_required`, so the next briefing tells the user
which command to run; it goes quiet until the problem changes or is fixed.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from ..kit import Notify, Outbox
from .errors import AuthRequiredError

logger = logging.getLogger(__name__)

EVENT = "event/auth_required"


class AuthGuard:
    """Wraps one server's polls; reports each distinct authorization problem once."""

    def __init__(
        self, server: str, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self.server = server
        self.clock = clock
        self._reported: str | None = None

    async def run(
        self,
        poll: Callable[[], Awaitable[Any]],
        notify: Notify,
    ) -> None:
        try:
            await poll()
        except AuthRequiredError as error:
            message, now = str(error), self.clock()  # one reading dates the key and the event
            # Keyed by day as well: a long outage is reminded of daily, not once or always.
            key = f"{now:%Y-%m-%d} {message}"
            if key != self._reported:
                logger.warning("%s watcher paused: %s", self.server, message)
                if await Outbox(notify).send(EVENT, self._payload(message, now)):
                    self._reported = key
            return
        if self._reported is not None:
            logger.info("%s watcher authorized again", self.server)
            self._reported = None

    def _payload(self, message: str, now: datetime) -> dict[str, Any]:
        # One id per problem per day, matching the host's 24 h dedupe window.
        digest = hashlib.sha256(f"{message}{now:%Y-%m-%d}".encode()).hexdigest()[:12]
        return {
            "id": f"{self.server}-auth-{digest}",
            "summary": f"{self.server} cannot read your Google account: {message}",
            "severity": "warning",
            "occurred_at": now.isoformat().replace("+00:00", "Z"),
            "server": self.server,
            "command": f"bothost-mcp-{self.server} auth",
        }
