"""``send_message``: the agent posts to a conversation other than the one it answers in.

The target is one the model chose, so the tool is registered ``egress: chosen``, and the
turn does the rest before it runs (:mod:`bothost.agent.turn`): the lethal-trifecta
interlock refuses it once the conversation holds private and untrusted data, and the
approvals (:mod:`bothost.agent.approvals`) ask the person — permission rules and remembered
answers apply, and nobody answering means no. What is sent goes the way briefings and
reminders go (``host.deliver``: a Slack post, the web page, a signed webhook, the
terminal), as a :class:`~bothost.models.Briefing` of one text.
"""

from __future__ import annotations

import asyncio

from bothost.agent.tools import ToolContext, ToolError
from bothost.events.delivery import DELIVERY_TIMEOUT, UnknownTargetError
from bothost.hookspecs import RegisterTool
from bothost.models import Address, AddressError, Briefing
from bothost.schedules.runner import TITLE_LIMIT
from bothost.schedules.store import MAX_TEXT

TARGETS = "slack:C…, web:NAME, webhook:NAME or console:"


def briefing(target: str, text: str, key: str) -> Briefing:
    """``text`` in the shape every platform delivers; ``key`` identifies it to a webhook."""
    first, _, rest = text.partition("\n")
    fits = len(first) <= TITLE_LIMIT
    title = first if fits else first[: TITLE_LIMIT - 1] + "…"
    return Briefing(
        title=title, items=[], text=text, targets=[target], footer=rest if fits else text, key=key
    )


async def send_message(ctx: ToolContext, target: str, text: str) -> str:
    """Post `text` to another conversation or target (asks the person first). To answer
    here, just reply.

    Args:
        target: slack:C…, web:NAME, webhook:NAME or console:.
        text: the message.
    """
    target = target.strip()
    try:
        Address.parse(target)
    except AddressError:
        raise ToolError(f"not a target: {target!r} ({TARGETS})") from None
    if target == str(ctx.session.address):
        raise ToolError("that is this conversation: answer here instead")
    if not text.strip():
        raise ToolError("the text is empty")
    if len(text) > MAX_TEXT:
        raise ToolError(f"the text is {len(text)} characters; at most {MAX_TEXT}")
    key = f"send_{ctx.call_id or id(text)}"
    try:
        async with asyncio.timeout(DELIVERY_TIMEOUT):
            await ctx.host.deliver(target, briefing(target, text, key))
    except TimeoutError:
        raise ToolError(f"{target} did not take it within {DELIVERY_TIMEOUT:g} s") from None
    except (UnknownTargetError, ValueError) as exc:
        raise ToolError(f"cannot send to {target}: {exc}") from None
    return f"Sent to {target}."


def register_tools(register: RegisterTool) -> None:
    register(send_message, egress="chosen")
