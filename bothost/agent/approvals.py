"""Approvals: who decides whether a tool call with side effects may run, and the record.

Order: the ``approve_tool_call`` policy hook; then the mode (``agent.approval``): ``allow``
runs everything, ``read-only`` refuses tools with side effects, ``ask`` asks the person
through the session's platform for ``destructive`` or ``egress: chosen`` tools. Nobody to
ask, no answer in time, or any failure means no. Tools marked ``always_ask`` (such as
``register_mcp``, which runs a command) need an admin's yes even in mode ``allow``. Every
decision is stored in ``approvals`` with who made it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bothost.agent.tools import Tool
from bothost.hookcall import call_policy
from bothost.models import Session
from bothost.platform import Question

if TYPE_CHECKING:
    from bothost.host import Host

logger = logging.getLogger(__name__)

ALWAYS_ASK = {"register_mcp"}


@dataclass
class ToolCall:
    """A tool call as the approval hook sees it."""

    name: str
    arguments: dict[str, Any]
    tool: Tool


@dataclass
class Decision:
    allowed: bool
    by: str
    reason: str = ""


def needs_approval(tool: Tool) -> bool:
    caps = tool.capabilities
    return caps.destructive or caps.egress == "chosen" or tool.name in ALWAYS_ASK


async def decide(host: Host, session: Session, call: ToolCall) -> Decision:
    decision = await _decide(host, session, call)
    await record(host, session, call, decision)
    return decision


async def _decide(host: Host, session: Session, call: ToolCall) -> Decision:
    verdict = call_policy(host.pm, "approve_tool_call", "deny", call=call, session=session)
    mode = host.config.agent.approval
    if verdict == "deny":
        return Decision(False, "policy", "refused by a policy plugin")
    if call.name in ALWAYS_ASK:
        if not session.is_admin:
            return Decision(False, "policy", "only an admin may do this")
        return await ask(host, session, call)
    if verdict == "allow":
        return Decision(True, "policy")
    if verdict != "ask" and not needs_approval(call.tool):
        return Decision(True, "auto")
    if mode == "read-only":
        return Decision(False, "mode", "agent.approval is read-only: no side effects")
    if mode == "allow" and verdict != "ask":
        return Decision(True, "mode")
    return await ask(host, session, call)


async def ask(host: Host, session: Session, call: ToolCall) -> Decision:
    platform = session.platform
    if platform is None:
        return Decision(False, "nobody", "nobody to ask for approval")
    args = json.dumps(call.arguments, ensure_ascii=False)
    if len(args) > 600:
        args = args[:600] + "…"
    question = Question(
        text=f"Allow the tool {call.name} with {args}?",
        kind="approval",
        user=session.user,
        timeout=host.config.agent.approval_timeout,
    )
    try:
        async with asyncio.timeout(question.timeout + 5):
            answer = await platform.ask(session.address, question)
    except TimeoutError:
        return Decision(False, "timeout", "no answer in time")
    except Exception:
        logger.exception("asking for approval of %s failed", call.name)
        return Decision(False, "error", "could not ask for approval")
    if answer is None:
        return Decision(False, "nobody", "nobody answered")
    who = session.user or session.address.platform
    if isinstance(answer, tuple):  # (yes/no, who answered)
        answer, who = answer
    return Decision(bool(answer), who, "" if answer else "the user said no")


async def record(host: Host, session: Session, call: ToolCall, decision: Decision) -> None:
    if decision.by == "auto":
        return
    row = {
        "session_id": session.id,
        "tool": call.name,
        "arguments": json.dumps(call.arguments, ensure_ascii=False),
        "decision": "allow" if decision.allowed else "deny",
        "decided_by": decision.by,
        "reason": decision.reason,
        "created_at": time.time(),
    }
    await host.store.run(lambda db: db.table("approvals").insert(row))
