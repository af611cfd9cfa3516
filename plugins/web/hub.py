"""Live connections from web pages: per-session event streams and pending questions.

Each open page holds one Server-Sent-Events stream for its session (``GET /api/events``).
The hub fans events out to those streams — questions (approvals, forms), messages the bot
sends on its own, briefings (to every page) — and keeps the questions waiting for an
answer. A question is asked only when a page of that session is connected (otherwise
nobody can answer, which means no); it waits for the answer endpoint up to the question's
timeout. Each stream has a bounded queue: a page that stops reading loses events rather
than growing the host's memory. Questions another host asked (its turn, our page; see
:mod:`bothost.plugins.web.questions`) are shown here too, in ``shown``, until it closes them.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any

from bothost.api import RateLimitedLog
from bothost.platform import Question

logger = logging.getLogger(__name__)

STREAM_QUEUE = 256  # events buffered per page; a page this far behind is not being read
CLOSED = None  # sentinel that ends a stream (host shutting down)


@dataclass
class Pending:
    """A question waiting for a page to answer it."""

    id: str
    session: str
    question: Question
    future: asyncio.Future[Any] = field(repr=False)

    def public(self) -> dict[str, Any]:
        q = self.question
        return {
            "id": self.id,
            "session": self.session,
            "text": q.text,
            "kind": q.kind,
            "schema": q.schema,
            "secret": q.secret,
            "timeout": q.timeout,
            "choices": [{"value": c.value, "label": c.label} for c in q.choices],
        }


class Hub:
    """Fan-out of page events per session, and the questions awaiting an answer."""

    def __init__(self) -> None:
        self.streams: dict[str, set[asyncio.Queue[Any]]] = {}
        self.pending: dict[str, Pending] = {}
        self.shown: dict[str, dict[str, Any]] = {}  # other hosts' open questions, public form
        self.closed = False
        # a page that stops reading loses every event after: a line a minute, with a count
        self.drops = RateLimitedLog(logger)

    def subscribe(self, session: str) -> asyncio.Queue[Any]:
        queue: asyncio.Queue[Any] = asyncio.Queue(STREAM_QUEUE)
        self.streams.setdefault(session, set()).add(queue)
        asked = [p.public() for p in self.pending.values()] + list(self.shown.values())
        for public in asked:  # a page reloaded mid-question sees it again
            if public["session"] == session:
                queue.put_nowait(("question", public))
        if self.closed:
            queue.put_nowait(CLOSED)
        return queue

    def unsubscribe(self, session: str, queue: asyncio.Queue[Any]) -> None:
        queues = self.streams.get(session)
        if queues is not None:
            queues.discard(queue)
            if not queues:
                del self.streams[session]

    def connected(self, session: str) -> bool:
        return bool(self.streams.get(session))

    def clients(self) -> int:
        return sum(len(q) for q in self.streams.values())

    def publish(self, session: str, event: str, data: Any) -> int:
        """Send an event to every page of ``session``; how many got it."""
        return sum(self._put(session, q, event, data) for q in list(self.streams.get(session, ())))

    def broadcast(self, event: str, data: Any) -> int:
        return sum(self.publish(s, event, data) for s in list(self.streams))

    def _put(self, session: str, queue: asyncio.Queue[Any], event: str, data: Any) -> bool:
        try:
            queue.put_nowait((event, data))
            return True
        except asyncio.QueueFull:
            self.drops.warning(
                session, "a web page is not reading its event stream; dropped %s", event
            )
            return False

    async def ask(self, session: str, question: Question) -> Any:
        """Put ``question`` on the session's pages; the answer, or None (nobody, timeout)."""
        if self.closed or not self.connected(session):
            return None
        pending = self.open(session, question)
        try:
            return await self.wait(pending)
        finally:
            self.end(pending)

    def open(self, session: str, question: Question) -> Pending:
        """A new pending question, shown on the session's pages here."""
        pending = Pending(
            uuid.uuid4().hex[:16], session, question, asyncio.get_running_loop().create_future()
        )
        self.pending[pending.id] = pending
        self.publish(session, "question", pending.public())
        return pending

    async def wait(self, pending: Pending) -> Any:
        """Its answer, or None after the question's timeout."""
        try:
            async with asyncio.timeout(pending.question.timeout):
                return await pending.future
        except TimeoutError:
            return None

    def end(self, pending: Pending) -> None:
        self.pending.pop(pending.id, None)
        self.publish(pending.session, "question_closed", {"id": pending.id})

    def show(self, public: dict[str, Any]) -> None:
        """Another host's question, on this host's pages of its session."""
        if public["id"] not in self.shown and not self.closed:
            self.shown[public["id"]] = public
            self.publish(public["session"], "question", public)

    def hide(self, question_id: str) -> None:
        public = self.shown.pop(question_id, None)
        if public is not None:
            self.publish(public["session"], "question_closed", {"id": question_id})

    def answer(self, session: str, question_id: str, answer: Any) -> bool:
        """Resolve a pending question of ``session``; False if there is none such."""
        pending = self.pending.get(question_id)
        if pending is None or pending.session != session or pending.future.done():
            return False
        pending.future.set_result(answer)
        return True

    def close(self) -> None:
        """End every stream and answer every pending question with None."""
        self.closed = True
        self.shown.clear()
        for pending in list(self.pending.values()):
            if not pending.future.done():
                pending.future.set_result(None)
        for queues in self.streams.values():
            for queue in queues:
                try:
                    queue.put_nowait(CLOSED)
                except asyncio.QueueFull:
                    queue.get_nowait()
                    queue.put_nowait(CLOSED)
