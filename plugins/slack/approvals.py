"""Tool approvals in a Slack thread: Approve / Deny buttons, answered by the right person.

The question is posted in the conversation's thread. Only the person whose message started
the turn, or an admin, may answer; anyone else who clicks is told so privately and the
question stays open. No answer within the timeout is a denial. Whatever happens, the message
is edited to show the decision and who made it, and the buttons go away.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bothost.plugins.slack.blocks import clip, context, section
from bothost.plugins.slack.mrkdwn import escape, sanitize

from bothost.models import Address
from bothost.platform import Question

if TYPE_CHECKING:
    from bothost.plugins.slack.platform import SlackPlatform

logger = logging.getLogger(__name__)

APPROVE, DENY = "bothost_approve", "bothost_deny"
CANCELLED = "Cancelled: the turn was stopped."
TEXT_LIMIT = 2900  # characters of the question shown (a section holds 3000)


@dataclass
class Pending:
    future: asyncio.Future[tuple[bool, str]]
    requester: str


class Approvals:
    def __init__(self, platform: SlackPlatform) -> None:
        self.platform = platform
        self.pending: dict[str, Pending] = {}

    def register(self, app: Any) -> None:
        app.action(APPROVE)(self.on_click)
        app.action(DENY)(self.on_click)

    async def ask(self, address: Address, question: Question, requester: str) -> tuple[bool, str]:
        """Post the question and wait; ``(allowed, who decided)``."""
        key = uuid.uuid4().hex
        text = clip(escape(sanitize(question.text)), TEXT_LIMIT)
        blocks = [
            section(f":warning: {text}"),
            context(f"Only {answerers(requester)} can answer."),
            {
                "type": "actions",
                "block_id": "approval",
                "elements": [
                    button(APPROVE, "Approve", "primary", key),
                    button(DENY, "Deny", "danger", key),
                ],
            },
        ]
        future: asyncio.Future[tuple[bool, str]] = asyncio.get_running_loop().create_future()
        self.pending[key] = Pending(future, requester)
        try:
            ts = await self.platform.post(
                address.channel,
                address.thread,
                f"Approval needed: {question.text}"[:TEXT_LIMIT],
                blocks=blocks,
            )
            try:
                async with asyncio.timeout(question.timeout):
                    allowed, by = await future
                note = f"{'✅ Approved' if allowed else '❌ Denied'} by <@{by}>"
            except TimeoutError:
                allowed, by = False, "timeout"
                note = f"⏱ Denied: no answer within {question.timeout:g} s"
            except asyncio.CancelledError:  # the turn was stopped: take the buttons away
                await self.platform.settle(address.channel, ts, text, CANCELLED)
                raise
        finally:
            self.pending.pop(key, None)
        await self.platform.update(
            address.channel,
            ts,
            f"{note}: {question.text}"[:TEXT_LIMIT],
            blocks=[section(text), context(note)],
        )
        return allowed, by

    async def on_click(self, ack: Any, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        user = body["user"]["id"]
        channel = (body.get("channel") or {}).get("id", "")
        thread = (body.get("message") or {}).get("thread_ts")
        pending = self.pending.get(action.get("value") or "")
        if pending is None or pending.future.done():
            await self.platform.ephemeral(
                channel, user, "This question is no longer waiting for an answer.", thread
            )
            return
        if not self.platform.access.may_answer(user, pending.requester):
            logger.info("slack user %s may not answer an approval for %s", user, pending.requester)
            await self.platform.ephemeral(
                channel, user, f"Only {answerers(pending.requester)} can answer this.", thread
            )
            return
        pending.future.set_result((action["action_id"] == APPROVE, user))


def answerers(requester: str) -> str:
    return f"<@{requester}> or an admin" if requester else "an admin"


def button(action_id: str, label: str, style: str, value: str) -> dict[str, Any]:
    return {
        "type": "button",
        "action_id": action_id,
        "style": style,
        "value": value,
        "text": {"type": "plain_text", "text": label},
    }
