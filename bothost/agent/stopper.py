"""``stop`` wherever the turn runs: cancelling a session's turns on every host.

Slack spreads a workspace's events over every host's Socket Mode connection, and a load
balancer spreads web requests, so the ``stop`` can reach host A while the turn runs on host
B. The host that receives it cancels its own turns, then asks the others over
:class:`~bothost.api.CrossHost` (``turns.stop``); each cancels its own and answers
(``turns.stopped``) with the sessions it cancelled, so the person is told "Stopped." or
"Nothing is running." truthfully. The asking host waits for as many answers as other hosts
listen (PostgreSQL counts their listener connections), at most :data:`ANSWER_WAIT`: a host
that has not answered by then is stuck or gone, and its turns are not reported. On one host
(SQLite) only the local cancel runs.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from typing import Any

from bothost.api import Notice
from bothost.models import Address

logger = logging.getLogger(__name__)

STOP = "turns.stop"
STOPPED = "turns.stopped"
ANSWER_WAIT = 3.0  # seconds for the other hosts to answer; each answers in milliseconds
MAX_REPORTED = 50  # sessions named in one answer: well inside a notice's size limit

Cancel = Callable[[Address, bool], list[Address]]


class Answers:
    """The answers to one stop request, until as many as expected have come."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.received = 0
        self.cancelled: list[Address] = []
        self.complete = asyncio.Event()

    def add(self, cancelled: list[Address]) -> None:
        self.received += 1
        self.cancelled += cancelled
        if self.received >= self.expected:
            self.complete.set()


class TurnStopper:
    """Sends stop requests to the other hosts and answers theirs."""

    def __init__(self, crosshost: Any, cancel: Cancel) -> None:
        self.crosshost = crosshost
        self.cancel = cancel  # this host's own: Host.cancel
        self.waiting: dict[str, Answers] = {}

    def subscribe(self) -> None:
        self.crosshost.subscribe(STOP, self.on_stop)
        self.crosshost.subscribe(STOPPED, self.on_stopped)

    async def stop(self, address: Address, within: bool = False) -> list[Address]:
        """Cancel the turns of ``address`` here and on every other host; those cancelled."""
        cancelled = self.cancel(address, within)
        if not self.crosshost.shared:
            return cancelled
        peers = await self.crosshost.peers()
        if not peers:
            return cancelled
        request = uuid.uuid4().hex
        answers = self.waiting[request] = Answers(peers)
        try:
            data = {"request": request, "address": str(address), "within": within}
            await self.crosshost.publish(STOP, data)
            try:
                async with asyncio.timeout(ANSWER_WAIT):
                    await answers.complete.wait()
            except TimeoutError:
                logger.warning(
                    "stop %s: %d of %d other hosts answered within %g s",
                    address,
                    answers.received,
                    peers,
                    ANSWER_WAIT,
                )
        finally:
            del self.waiting[request]
        return list(dict.fromkeys(cancelled + answers.cancelled))

    async def on_stop(self, notice: Notice) -> None:
        if notice.here:
            return  # the asking host cancelled its own turns already
        address = Address.parse(notice.data["address"])
        cancelled = self.cancel(address, bool(notice.data.get("within")))
        if cancelled:
            logger.info("stop from another host: cancelled %s", ", ".join(map(str, cancelled)))
        reported = [str(where) for where in cancelled[:MAX_REPORTED]]
        await self.crosshost.publish(
            STOPPED, {"request": notice.data["request"], "cancelled": reported}
        )

    async def on_stopped(self, notice: Notice) -> None:
        answers = self.waiting.get(notice.data.get("request", ""))
        if answers is not None:  # an answer to another host's request, or one come too late
            answers.add([Address.parse(where) for where in notice.data.get("cancelled", [])])
