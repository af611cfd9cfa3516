"""Cross-host messages: a notice published on one host reaches subscribers on every host.

Several hosts on one PostgreSQL store each hold their own streams (a web page's events) and
run their own turns, so "a briefing was stored", "a message for web:ana" or "stop web:ana"
produced on one host must reach the one holding that page or running that turn. PostgreSQL
``LISTEN/NOTIFY`` carries them (:mod:`bothost.crosshost.postgres`): nothing else to run, the
database every host already reaches, and a notice sent inside a write transaction is
delivered only when that transaction commits. On SQLite — one host — :class:`LocalCrossHost`
delivers in the process, so callers never branch on the backend.

NOTIFY is not durable (a listener whose connection is down misses what was sent meanwhile)
and carries at most 8000 bytes. So a notice says "look", with ids, never bodies; what must
not be lost is in the store first, and each subscriber's ``resync`` reads the store again
whenever notices may have been missed. A host's own subscribers get its notices directly
(``here=True``), never through the database, so they do not depend on its listener.

On top of notices, :meth:`CrossHostBase.ask` asks the other hosts something and gathers their
answers ("stop this session's turns", "who holds a page of this session?"): it waits for as
many answers as other hosts listen, at most :data:`ANSWER_WAIT`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Callable
from typing import Any

from bothost.api import Notice, NoticeHandler, Respond, Resync

logger = logging.getLogger(__name__)

# PostgreSQL refuses a NOTIFY payload of 8000 bytes or more; the whole payload (envelope
# included) is held under this, with room to spare for an ask's wrapping of it.
MAX_NOTICE_BYTES = 7000
ANSWER_WAIT = 3.0  # seconds for the other hosts to answer; each answers in milliseconds
ASK, ANSWERED = "crosshost.ask", "crosshost.answer"  # the topics asking travels on


def encode(topic: str, data: dict[str, Any], origin: str) -> str:
    """The notice as NOTIFY's payload; ValueError when it would be too big to send."""
    payload = json.dumps({"topic": topic, "from": origin, "data": data}, separators=(",", ":"))
    if len(payload.encode()) > MAX_NOTICE_BYTES:
        raise ValueError(
            f"notice {topic!r} is {len(payload.encode())} bytes, over {MAX_NOTICE_BYTES}: "
            "send ids, not bodies (store the body, notify its id)"
        )
    return payload


class Subscribers:
    """Who listens to which topic in this process; each handler's failure is its own."""

    def __init__(self) -> None:
        self.handlers: dict[str, list[NoticeHandler]] = {}
        self.resyncs: list[Resync] = []

    def add(self, topic: str, handler: NoticeHandler, resync: Resync | None) -> None:
        self.handlers.setdefault(topic, []).append(handler)
        if resync is not None:
            self.resyncs.append(resync)

    async def deliver(self, notice: Notice) -> None:
        for handler in list(self.handlers.get(notice.topic, ())):
            try:
                await handler(notice)
            except asyncio.CancelledError:
                raise
            except Exception:  # boundary: one subscriber's bug must not starve the others
                logger.exception("cross-host notice %s: a subscriber failed", notice.topic)

    async def resync(self) -> None:
        for resync in list(self.resyncs):
            try:
                await resync()
            except asyncio.CancelledError:
                raise
            except Exception:  # boundary, as above; the next gap or notice tries again
                logger.exception("cross-host resync failed")


class Gathering:
    """The answers to one question to the other hosts, until as many as expected came."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.answers: list[dict[str, Any]] = []
        self.complete = asyncio.Event()

    def add(self, answer: dict[str, Any]) -> None:
        self.answers.append(answer)
        if len(self.answers) >= self.expected:
            self.complete.set()


class CrossHostBase:
    """Subscribing, and asking the other hosts; a backend adds ``publish`` and ``peers``."""

    shared = False  # whether other hosts can be listening

    def __init__(self, store: Any, origin: str) -> None:
        self.store = store
        self.origin = origin  # tells this host's notices from the others'
        self.subscribers = Subscribers()
        self.gatherings: dict[str, Gathering] = {}
        self.responders: dict[str, Respond] = {}
        self.subscribe(ASK, self.on_ask)
        self.subscribe(ANSWERED, self.on_answered)

    def subscribe(self, topic: str, handler: NoticeHandler, resync: Resync | None = None) -> None:
        self.subscribers.add(topic, handler, resync)

    async def publish(
        self, topic: str, data: dict[str, Any], write: Callable[[Any], Any] | None = None
    ) -> Any:
        raise NotImplementedError

    async def peers(self) -> int:
        raise NotImplementedError

    def answer(self, topic: str, respond: Respond) -> None:
        """Answer the other hosts' ``ask(topic, …)`` with ``await respond(data)``."""
        self.responders[topic] = respond

    async def ask(self, topic: str, data: dict[str, Any]) -> list[dict[str, Any]]:
        """Ask every other host; their answers (``{}`` from a host with nothing answering
        ``topic``), those in by :data:`ANSWER_WAIT` (a host silent by then is stuck or gone)."""
        if not self.shared:
            return []
        peers = await self.peers()
        if not peers:
            return []
        request = uuid.uuid4().hex
        gathering = self.gatherings[request] = Gathering(peers)
        try:
            await self.publish(ASK, {"topic": topic, "request": request, "data": data})
            try:
                async with asyncio.timeout(ANSWER_WAIT):
                    await gathering.complete.wait()
            except TimeoutError:
                logger.warning(
                    "%s: %d of %d other hosts answered within %g s",
                    topic,
                    len(gathering.answers),
                    peers,
                    ANSWER_WAIT,
                )
        finally:
            del self.gatherings[request]
        return gathering.answers

    async def on_ask(self, notice: Notice) -> None:
        if notice.here:
            return  # the asking host does its own part itself
        respond = self.responders.get(notice.data["topic"])
        # every host answers, so the asking one waits for nobody who has nothing to say
        answer = await respond(notice.data["data"]) if respond is not None else {}
        await self.publish(ANSWERED, {"request": notice.data["request"], "data": answer})

    async def on_answered(self, notice: Notice) -> None:
        gathering = self.gatherings.get(notice.data.get("request", ""))
        if gathering is not None:  # else another host's question, or an answer too late
            gathering.add(notice.data.get("data", {}))


class LocalCrossHost(CrossHostBase):
    """One host (SQLite): notices go to this process's subscribers only."""

    async def publish(
        self, topic: str, data: dict[str, Any], write: Callable[[Any], Any] | None = None
    ) -> Any:
        encode(topic, data, self.origin)  # the same limit on both backends
        result = await self.store.run(write) if write is not None else None
        await self.subscribers.deliver(Notice(topic, data, here=True))
        return result

    async def peers(self) -> int:
        """How many other hosts are listening: none."""
        return 0

    def health(self) -> dict[str, Any]:
        return {"ok": True, "shared": False}

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass


def open_crosshost(store: Any, origin: str) -> Any:
    """The cross-host messages for ``store``'s backend (PostgreSQL's, or in-process)."""
    if store.dialect == "postgresql":
        from bothost.crosshost.postgres import PostgresCrossHost

        return PostgresCrossHost(store, origin)
    return LocalCrossHost(store, origin)
