"""Live connections from web pages: per-session event streams and pending questions.

Each open page holds one Server-Sent-Events stream for its session (``GET /api/events``).
The hub fans events out to those streams — questions (approvals, forms), messages the bot
sends on its own, briefings (to every page) — and keeps the questions waiting for an
answer. A question is asked only when a page of that session is connected (otherwise
nobody can answer, which means no); it waits for the answer endpoint up to the question's
timeout. Each stream has a bounded queue: a page that stops reading loses events rather
than growing the host's memory.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any

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
        self.closed = False

    def subscribe(self, session: str) -> asyncio.Queue[Any]:
        queue: asyncio.Queue[Any] = asyncio.Queue(STREAM_QUEUE)
        self.streams.setdefault(session, set()).add(queue)
        for pending in self.pending.values():  # a page reloaded mid-question sees it again
            if pending.session == session:
                queue.put_nowait(("question", pending.public()))
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
        return sum(self._put(q, event, data) for q in list(self.streams.get(session, ())))

    def broadcast(self, event: str, data: Any) -> int:
        return sum(self.publish(s, event, data) for s in list(self.streams))

    def _put(self, queue: asyncio.Queue[Any], event: str, data: Any) -> bool:
        try:
            queue.put_nowait((event, data))
            return True
        except asyncio.QueueFull:
            logger.warning("a web page is not reading its event stream; dropped %s", event)
            return False

    async def ask(self, session: str, question: Question) -> Any:
        """Put ``question`` on the session's pages; the answer, or None (nobody, timeout)."""
        if self.closed or not self.connected(session):
            return None
        pending = Pending(
            uuid.uuid4().hex[:16], session, question, asyncio.get_running_loop().create_future()
        )
        self.pending[pending.id] = pending
        self.publish(session, "question", pending.public())
        try:
            async with asyncio.timeout(question.timeout):
                return await pending.future
        except TimeoutError:
            return None
        finally:
            self.pending.pop(pending.id, None)
            self.publish(session, "question_closed", {"id": pending.id})

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
