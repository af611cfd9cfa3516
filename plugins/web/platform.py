"""The ``web`` platform: the built-in web chat as a platform the host can talk through.

Sessions are ``web:<session>`` where the page picks the session name. The page's HTTP
requests (see :mod:`bothost.plugins.web.chat`) hand messages to the host; this object is
the other direction: ``send`` and ``send_briefing`` store what they deliver and reach the
open pages of every host sharing the store (a :class:`~bothost.plugins.web.feed.Feed` each;
a stored briefing also shows on a page opened later); ``ask`` puts a question on the
session's pages through the :class:`~bothost.plugins.web.hub.Hub`, on every host (see
:mod:`bothost.plugins.web.questions`). It keeps the counters the web parts add to
``/metrics``.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from bothost.plugins.web import briefings, messages, questions, sessions
from bothost.plugins.web.feed import Feed
from bothost.plugins.web.hub import Hub

from bothost.api import HostApi, Notice
from bothost.models import Address, Briefing
from bothost.platform import Question

logger = logging.getLogger(__name__)

WHO = "web"  # who answered an approval: a web UI session is the (admin) operator
PAGES = "web.pages"  # "how many pages of this session do you hold?"
QUESTION = "web.question"  # a question was asked (its id)
ANSWERED = "web.answered"  # a question was answered (its id; the answer is in the row)
CLOSED = "web.question_closed"  # a question is over (its id)


class WebPlatform:
    name = "web"

    def __init__(self) -> None:
        self.host: HostApi | None = None
        self.hub = Hub()
        self.counters: Counter[tuple[str, ...]] = Counter()  # (metric, label values...) → n
        self.briefings = Feed("web.briefings", briefings.newest, briefings.since, self.show)
        self.messages = Feed("web.messages", messages.newest, messages.since, self.tell)
        self.shared: set[str] = set()  # ids of this host's questions shown on other hosts too
        self.wired = False

    def enabled(self, host: HostApi) -> bool:
        return bool(host.config.platforms.web.enabled)

    def target_problem(self, channel: str) -> str | None:
        """Why ``tick.deliver_to: web:<channel>`` cannot work, or None: a briefing goes to a
        session, and a session name a page could never open is refused at config load."""
        return sessions.target_problem(channel)

    async def start(self, host: HostApi) -> None:
        self.host = host
        self.hub.closed = False
        await self.briefings.start(host)
        await self.messages.start(host)
        if not self.wired:
            self.wired = True
            host.crosshost.answer(PAGES, self.pages_here)
            host.crosshost.subscribe(QUESTION, self.on_question, resync=self.catch_up)
            host.crosshost.subscribe(ANSWERED, self.on_answered)
            host.crosshost.subscribe(CLOSED, self.on_closed)

    async def stop(self) -> None:
        self.hub.close()

    def bind(self, host: HostApi) -> None:
        """Attach to ``host`` when routes are served without the platform being started."""
        if self.host is None:
            self.host = host

    def health(self) -> dict[str, Any]:
        return {"pages": self.hub.clients(), "open_questions": len(self.hub.pending)}

    async def send(self, address: Address, text: str, **kwargs: Any) -> str:
        """Show ``text`` on the session's open pages, whichever host holds them."""
        if self.host is None:
            raise RuntimeError("the web platform is not bound to a host")
        row = await self.messages.publish(
            self.host, lambda db: messages.insert(db, address.channel, text)
        )
        return f"web_messages:{row['id']}"

    async def send_briefing(self, address: Address, briefing: Briefing) -> str:
        if self.host is None:
            raise RuntimeError("the web platform is not bound to a host")
        try:
            row = await self.briefings.publish(
                self.host, lambda db: briefings.insert(db, address, briefing)
            )
        except Exception:
            self.counters["briefings", "failed"] += 1
            raise
        self.counters["briefings", "delivered"] += 1
        return f"web_briefings:{row['id']}"

    def show(self, row: dict[str, Any]) -> None:
        """A briefing stored by any host, on every page this host holds."""
        self.hub.broadcast("briefing", row)

    def tell(self, row: dict[str, Any]) -> None:
        """A message stored by any host, on this host's pages of its session."""
        if not self.hub.publish(row["session"], "message", {"text": row["text"]}):
            logger.debug("web message %s: no page of %s open here", row["id"], row["session"])

    async def ask(self, address: Address, question: Question) -> Any:
        answer = await self.ask_anywhere(address.channel, question)
        if question.kind == "approval" and answer is not None:
            if isinstance(answer, str) and any(answer == c.value for c in question.choices):
                return answer, WHO  # one of the further yeses the question offered
            return bool(answer), WHO
        return answer

    # --- questions across hosts -------------------------------------------------------------

    async def ask_anywhere(self, session: str, question: Question) -> Any:
        """Ask on the session's pages here and on every other host; None when no host holds
        one, or nobody answered in time."""
        hub, host = self.hub, self.host
        share = host is not None and host.crosshost.shared and not question.secret
        if hub.closed or not (hub.connected(session) or (share and await self.elsewhere(session))):
            return None
        pending = hub.open(session, question)
        try:
            if share:
                assert host is not None
                public = pending.public()
                self.shared.add(pending.id)
                await host.crosshost.publish(
                    QUESTION, {"id": pending.id}, write=lambda db: questions.insert(db, public)
                )
            return await hub.wait(pending)
        finally:
            hub.end(pending)
            if pending.id in self.shared:
                self.shared.discard(pending.id)
                await self.close_elsewhere(pending.id)

    async def elsewhere(self, session: str) -> bool:
        assert self.host is not None
        answers = await self.host.crosshost.ask(PAGES, {"session": session})
        return any(answer.get("pages") for answer in answers)

    async def close_elsewhere(self, question_id: str) -> None:
        assert self.host is not None
        try:
            await self.host.crosshost.publish(
                CLOSED, {"id": question_id}, write=lambda db: questions.close(db, question_id)
            )
        except Exception:  # cleanup: the others drop it when its row is pruned or they resync
            logger.exception("web question %s: could not close it on the other hosts", question_id)

    async def answer(self, session: str, question_id: str, value: Any) -> bool:
        """An answer posted here, to a question of this host or of another; whether it was
        an open question of ``session`` (the first answer wins)."""
        if self.hub.answer(session, question_id, value):
            return True
        shown = self.hub.shown.get(question_id)
        if self.host is None or shown is None or shown["session"] != session:
            return False
        counted = await self.host.crosshost.publish(
            ANSWERED,
            {"id": question_id},
            write=lambda db: questions.answer(db, question_id, session, value),
        )
        return bool(counted)

    async def pages_here(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"pages": len(self.hub.streams.get(str(data.get("session")), ()))}

    async def on_question(self, notice: Notice) -> None:
        if not notice.here:
            await self.show_if_open(notice.data["id"])

    async def show_if_open(self, question_id: str) -> None:
        assert self.host is not None
        row = await self.host.store.run(lambda db: questions.read(db, question_id))
        if row is not None and not row["closed"] and row["answer"] is None:
            self.hub.show(row["question"])

    async def on_answered(self, notice: Notice) -> None:
        await self.take_answer(notice.data["id"])

    async def take_answer(self, question_id: str) -> None:
        pending = self.hub.pending.get(question_id)
        if pending is None or pending.future.done() or self.host is None:
            return  # not ours, or answered already
        row = await self.host.store.run(lambda db: questions.read(db, question_id))
        if row is not None and row["answer"] is not None and not pending.future.done():
            pending.future.set_result(row["answer"]["value"])

    async def on_closed(self, notice: Notice) -> None:
        self.hub.hide(notice.data["id"])

    async def catch_up(self) -> None:
        """After a gap: show the other hosts' open questions, drop the closed ones, and take
        the answers to ours that came meanwhile."""
        if self.host is None:
            return
        still_open = await self.host.store.run(questions.open_ones)
        ids = {public["id"] for public in still_open}
        for public in still_open:
            if public["id"] not in self.hub.pending:
                self.hub.show(public)
        for question_id in [q for q in self.hub.shown if q not in ids]:
            self.hub.hide(question_id)
        for question_id in list(self.shared):
            await self.take_answer(question_id)
