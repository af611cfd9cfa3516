"""The ``web`` platform: the built-in web chat as a platform the host can talk through.

Sessions are ``web:<session>`` where the page picks the session name. The page's HTTP
requests (see :mod:`bothost.plugins.web.chat`) hand messages to the host; this object is
the other direction: ``send`` and ``send_briefing`` store what they deliver and reach the
open pages of every host sharing the store (a :class:`~bothost.plugins.web.feed.Feed` each;
a stored briefing also shows on a page opened later); ``ask`` goes to this host's pages of
the session through the :class:`~bothost.plugins.web.hub.Hub`. It keeps the counters the
web parts add to ``/metrics``.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from typing import Any

from bothost.plugins.web import briefings, messages
from bothost.plugins.web.feed import Feed
from bothost.plugins.web.hub import Hub

from bothost.api import HostApi
from bothost.models import Address, Briefing
from bothost.platform import Question

logger = logging.getLogger(__name__)

SESSION_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")
WHO = "web"  # who answered an approval: a web UI session is the (admin) operator


class WebPlatform:
    name = "web"

    def __init__(self) -> None:
        self.host: HostApi | None = None
        self.hub = Hub()
        self.counters: Counter[tuple[str, ...]] = Counter()  # (metric, label values...) → n
        self.briefings = Feed("web.briefings", briefings.newest, briefings.since, self.show)
        self.messages = Feed("web.messages", messages.newest, messages.since, self.tell)

    def enabled(self, host: HostApi) -> bool:
        return bool(host.config.platforms.web.enabled)

    async def start(self, host: HostApi) -> None:
        self.host = host
        self.hub.closed = False
        await self.briefings.start(host)
        await self.messages.start(host)

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
        answer = await self.hub.ask(address.channel, question)
        if question.kind == "approval" and answer is not None:
            if isinstance(answer, str) and any(answer == c.value for c in question.choices):
                return answer, WHO  # one of the further yeses the question offered
            return bool(answer), WHO
        return answer


def valid_session(name: Any) -> bool:
    return isinstance(name, str) and SESSION_PATTERN.fullmatch(name) is not None
