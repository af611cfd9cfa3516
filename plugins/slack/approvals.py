"""Tool approvals in a Slack thread: Approve / Deny buttons, answered by the right person.

The question is posted in the conversation's thread, with one more button for each way of
saying yes that core offers (``Question.choices``: "allow for this conversation", "always
allow this exact call"); a click on one answers with that choice. Only the person whose
message started the turn, or an admin, may answer; anyone else who clicks is told so
privately and the question stays open. No answer within the timeout is a denial. Whatever
happens, the message is edited to show the decision and who made it, and the buttons go
away.
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
from bothost.platform import ALLOW_ALWAYS, ALLOW_CONVERSATION, Question

if TYPE_CHECKING:
    from bothost.plugins.slack.platform import SlackPlatform

logger = logging.getLogger(__name__)

APPROVE, DENY = "bothost_approve", "bothost_deny"
# the further yeses a question may offer: one action id each, answering with the choice
CHOICE_ACTIONS = {f"{APPROVE}_{value}": value for value in (ALLOW_CONVERSATION, ALLOW_ALWAYS)}
CANCELLED = "Cancelled: the turn was stopped."
TEXT_LIMIT = 2900  # characters of the question shown (a section holds 3000)


@dataclass
class Pending:
    future: asyncio.Future[tuple[bool | str, str]]
    requester: str
    offered: dict[str, str]  # action id -> choice value, for the choices this question offers


class Approvals:
    def __init__(self, platform: SlackPlatform) -> None:
        self.platform = platform
        self.pending: dict[str, Pending] = {}

    def register(self, app: Any) -> None:
        for action_id in (APPROVE, DENY, *CHOICE_ACTIONS):
            app.action(action_id)(self.on_click)

    async def ask(
        self, address: Address, question: Question, requester: str
    ) -> tuple[bool | str, str]:
        """Post the question and wait; ``(yes, no or a choice's value, who decided)``."""
        key = uuid.uuid4().hex
        text = clip(escape(sanitize(question.text)), TEXT_LIMIT)
        offered = {f"{APPROVE}_{c.value}": c.value for c in question.choices}
        labels = {c.value: c.label for c in question.choices}
        extra = [button(a, labels[v], "", key) for a, v in offered.items() if a in CHOICE_ACTIONS]
        blocks = [
            section(f":warning: {text}"),
            context(f"Only {answerers(requester)} can answer."),
            {
                "type": "actions",
                "block_id": "approval",
                "elements": [
                    button(APPROVE, "Approve", "primary", key),
                    *extra,
                    button(DENY, "Deny", "danger", key),
                ],
            },
        ]
        future: asyncio.Future[tuple[bool | str, str]] = asyncio.get_running_loop().create_future()
        self.pending[key] = Pending(future, requester, offered)
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
                how = f" ({labels[allowed].lower()})" if isinstance(allowed, str) else ""
                note = f"{'✅ Approved' if allowed else '❌ Denied'} by <@{by}>{how}"
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
        action_id = action["action_id"]
        answer = pending.offered.get(action_id) or action_id == APPROVE
        pending.future.set_result((answer, user))


def answerers(requester: str) -> str:
    return f"<@{requester}> or an admin" if requester else "an admin"


def button(action_id: str, label: str, style: str, value: str) -> dict[str, Any]:
    made = {
        "type": "button",
        "action_id": action_id,
        "value": value,
        "text": {"type": "plain_text", "text": label},
    }
    if style:  # Slack accepts only primary or danger; a plain button has none
        made["style"] = style
    return made
