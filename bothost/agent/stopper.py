"""``stop`` wherever the turn runs: cancelling a session's turns on every host.

Slack spreads a workspace's events over every host's Socket Mode connection, and a load
balancer spreads web requests, so the ``stop`` can reach host A while the turn runs on host
B. The host that receives it cancels its own turns, then asks the others over
:class:`~bothost.api.CrossHost` (``turns.stop``); each cancels its own and answers with the
sessions it cancelled, so the person is told "Stopped." or "Nothing is running."
truthfully. A host that has not answered within a few seconds is stuck or gone, and its
turns are not reported. On one host (SQLite) only the local cancel runs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from bothost.models import Address

logger = logging.getLogger(__name__)

STOP = "turns.stop"
MAX_REPORTED = 50  # sessions named in one answer: well inside a notice's size limit

Cancel = Callable[[Address, bool], list[Address]]


class TurnStopper:
    """Asks the other hosts to stop a session's turns, and answers their asking."""

    def __init__(self, crosshost: Any, cancel: Cancel) -> None:
        self.crosshost = crosshost
        self.cancel = cancel  # this host's own: Host.cancel
        crosshost.answer(STOP, self.on_stop)

    async def stop(self, address: Address, within: bool = False) -> list[Address]:
        """Cancel the turns of ``address`` here and on every other host; those cancelled."""
        cancelled = self.cancel(address, within)
        answers = await self.crosshost.ask(STOP, {"address": str(address), "within": within})
        for answer in answers:
            cancelled += [Address.parse(where) for where in answer.get("cancelled", [])]
        return list(dict.fromkeys(cancelled))

    async def on_stop(self, data: dict[str, Any]) -> dict[str, Any]:
        cancelled = self.cancel(Address.parse(data["address"]), bool(data.get("within")))
        if cancelled:
            logger.info("stop from another host: cancelled %s", ", ".join(map(str, cancelled)))
        return {"cancelled": [str(where) for where in cancelled[:MAX_REPORTED]]}
