"""Approvals: who decides whether a tool call may run, and the record.

The lethal-trifecta interlock has refused what it must before anything here runs (see
:mod:`bothost.agent.turn`), so nothing here can loosen it. Then, in order:

1. A ``deny`` from the ``approve_tool_call`` policy hook, or from the permission rule that
   decides the call (stored rules, then config ``permissions``: the first that matches, but
   a ``deny`` that matches too beats an ``ask`` above it,
   :func:`bothost.rules.match.deciding_match`), refuses it.
2. Tools marked ``always_ask`` (``register_mcp``, which runs a command) need an admin's yes
   whatever the rules and the mode say.
3. Otherwise the hook's verdict and the rule's action, the stricter of the two (``ask`` over
   ``allow``), decide; with neither, the default: calls with no ``destructive`` or ``egress:
   chosen`` capability run, and the mode (``agent.approval``) decides the rest — ``allow``
   runs them, ``read-only`` refuses them, ``ask`` asks. The capabilities are the call's
   (:meth:`ToolCall.capabilities`): ``schedule`` to another conversation is ``egress:
   chosen``, to this one it is not.
4. Before asking, the answers people chose to remember are consulted; when asked, the person
   may answer "allow for this conversation" or "always allow this exact call", which stores
   such an answer. Nobody to ask, no answer in time, or any failure means no.

A stored answer (and the record) names the tool by its origin (:mod:`bothost.rules.origin`:
server, what it runs, the tool's own name), and matches only that tool, so no renaming of a
tool or a server hands it to another; rules are matched with the call's origin too
(:func:`bothost.rules.match.match_tool`).

Every decision but the default's plain "runs" is stored in ``approvals`` with who made it
and the tool's origin (:func:`record`). That table is the record for people: nothing here
reads it back, so no row of it can allow a call (remembered answers live with the rules).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bothost import identity
from bothost.agent.shown import shown_arguments
from bothost.agent.tools import Capabilities, Tool
from bothost.config import PermissionRule, RuleWho
from bothost.hooks.call import call_policy
from bothost.models import Session
from bothost.platform import ALLOW_ALWAYS, ALLOW_CONVERSATION, Asking, Choice, Question
from bothost.rules import store as rule_store
from bothost.rules.match import (
    Match,
    Rule,
    config_rules,
    deciding_match,
    first_match,
    literal,
    text_of,
)

if TYPE_CHECKING:
    from bothost.host.host import Host

logger = logging.getLogger(__name__)

ALWAYS_ASK = {"register_mcp"}
REMEMBER = [
    Choice(ALLOW_CONVERSATION, "Allow for this conversation"),
    Choice(ALLOW_ALWAYS, "Always allow this exact call"),
]


@dataclass
class ToolCall:
    """A tool call as the approval hook sees it."""

    name: str
    arguments: dict[str, Any]
    tool: Tool

    def capabilities(self, session: Session) -> Capabilities:
        """This call's capabilities in ``session`` (:meth:`Tool.capabilities_for`)."""
        return self.tool.capabilities_for(self.arguments, session)


@dataclass
class Decision:
    allowed: bool
    by: str
    reason: str = ""
    recorded: bool = True


@dataclass
class Plan:
    """What happens to a call before anyone is asked (``bothost rules test`` prints it)."""

    action: str  # allow | ask | deny
    by: str  # policy | rule | auto | mode | default
    reason: str
    match: Match | None = None
    rememberable: bool = True  # whether a remembered answer may stand in for asking


def needs_approval(tool: Tool, caps: Capabilities | None = None) -> bool:
    """Whether the default asks about a call of ``tool`` with ``caps`` (the tool's if none)."""
    caps = caps if caps is not None else tool.capabilities
    return caps.destructive or caps.egress == "chosen" or tool.name in ALWAYS_ASK


def default_reason(tool: Tool, caps: Capabilities | None = None) -> str:
    """Why the default asks about a call of ``tool`` with ``caps`` (the tool's if none)."""
    if tool.name in ALWAYS_ASK:
        return f"{tool.name} always needs an admin's yes"
    caps = caps if caps is not None else tool.capabilities
    found = ["destructive"] if caps.destructive else []
    if caps.egress == "chosen":
        found.append("egress: chosen")
    return f"{tool.name} is {' and '.join(found)}"


def plan(
    call: ToolCall, session: Session, verdict: str | None, found: Match | None, mode: str
) -> Plan:
    """The decision for ``call`` given the hook's ``verdict``, the matching rule and the mode."""
    action = found.rule.action if found else None
    named = f"permission rule {found.rule.ref}" if found else ""
    if found and found.rule.spec.note:
        named += f" ({found.rule.spec.note})"
    if verdict == "deny":
        return Plan("deny", "policy", "refused by a policy plugin")
    if action == "deny":
        return Plan("deny", "rule", f"refused by {named}", found)
    if call.name in ALWAYS_ASK:
        if not session.is_admin:
            return Plan("deny", "policy", "only an admin may do this")
        return Plan("ask", "policy", default_reason(call.tool), found, rememberable=False)
    if "ask" in (verdict, action):
        by, why = ("rule", named) if action == "ask" else ("policy", "a policy plugin")
        if mode == "read-only":
            return Plan("deny", "mode", "agent.approval is read-only: no side effects", found)
        return Plan("ask", by, f"{why} asks", found)
    if action == "allow":
        return Plan("allow", "rule", f"allowed by {named}", found)
    if verdict == "allow":
        return Plan("allow", "policy", "allowed by a policy plugin")
    caps = call.capabilities(session)
    if not needs_approval(call.tool, caps):
        return Plan("allow", "auto", "default: nothing that needs approval")
    why = default_reason(call.tool, caps)
    if mode == "read-only":
        return Plan("deny", "mode", "agent.approval is read-only: no side effects")
    if mode == "allow":
        return Plan("allow", "mode", f"default: {why}, and agent.approval is allow")
    return Plan("ask", "default", f"default: {why}, and agent.approval is ask")


async def decide(host: Host, session: Session, call: ToolCall) -> Decision:
    decision = await _decide(host, session, call)
    if decision.recorded:
        await record(host, session, call, decision)
    return decision


@dataclass
class Evaluation:
    """What the rules and the default make of a call, before anyone is asked."""

    plan: Plan
    answer: Match | None = None  # a remembered answer that stands in for asking
    order: list[Rule] = field(default_factory=list)  # the rules in the order checked


async def evaluate(host: Host, session: Session, call: ToolCall) -> Evaluation:
    verdict = call_policy(host.pm, "approve_tool_call", "deny", call=call, session=session)
    stored, remembered = await host.store.run(rule_store.load)
    order = stored + config_rules(host.config.permissions)
    origin = call.tool.where_from()
    found = deciding_match(order, call.name, call.arguments, session, origin)
    chosen = plan(call, session, verdict, found, host.config.agent.approval)
    answer = None
    if chosen.action == "ask" and chosen.rememberable:
        answer = first_match(remembered, call.name, call.arguments, session, origin)
    return Evaluation(chosen, answer, order)


async def _decide(host: Host, session: Session, call: ToolCall) -> Decision:
    evaluation = await evaluate(host, session, call)
    chosen = evaluation.plan
    if chosen.action != "ask":
        # a rule allowing what would run anyway is not worth a row per call
        quiet = chosen.by == "auto" or (
            chosen.by == "rule"
            and chosen.action == "allow"
            and not needs_approval(call.tool, call.capabilities(session))
        )
        return Decision(chosen.action == "allow", chosen.by, chosen.reason, recorded=not quiet)
    if evaluation.answer is not None:
        return Decision(True, f"remembered {evaluation.answer.rule.ref}")
    return await ask(host, session, call, chosen.rememberable)


async def put_question(
    session: Session, question: Question, what: str
) -> Decision | tuple[Any, str]:
    """Ask the person of ``session`` for an approval: their answer and who gave it, or the
    Decision (a no) that not being able to ask means — no platform that asks, no answer in
    time, the platform failing (logged, naming ``what``), nobody answering."""
    platform = session.platform
    if not isinstance(platform, Asking):  # none, or one that cannot ask: nobody to say yes
        return Decision(False, "nobody", "nobody to ask for approval")
    try:
        async with asyncio.timeout(question.timeout + 5):
            answer = await platform.ask(session.address, question)
    except TimeoutError:
        return Decision(False, "timeout", "no answer in time")
    except Exception:  # boundary: the platform's failure is a no
        logger.exception("asking for approval of %s failed", what)
        return Decision(False, "error", "could not ask for approval")
    if answer is None:
        return Decision(False, "nobody", "nobody answered")
    who = session.user or session.address.platform
    if isinstance(answer, tuple):  # (yes/no or a choice, who answered)
        answer, who = answer
    return answer, str(who)


async def ask(host: Host, session: Session, call: ToolCall, rememberable: bool = False) -> Decision:
    question = Question(
        text=f"Allow the tool {call.name} with {shown_arguments(call.arguments)}?",
        kind="approval",
        user=session.user,
        timeout=host.config.agent.approval_timeout,
        choices=list(REMEMBER) if rememberable else [],
    )
    asked = await put_question(session, question, call.name)
    if isinstance(asked, Decision):
        return asked
    answer, who = asked
    if any(answer == c.value for c in question.choices):
        rule = remembered(answer, call, session)
        origin = call.tool.where_from()  # the answer is about this tool, whatever its name
        # the platform that asked vouches for who answered
        by = identity.person(session.address.platform, str(who))
        rule_id = await host.store.run(
            lambda db: rule_store.add(db, rule, by, kind=rule_store.ANSWER, tool_origin=origin)
        )
        return Decision(True, str(who), f"remembered as #{rule_id}")
    return Decision(bool(answer), str(who), "" if answer else "the user said no")


def remembered(choice: str, call: ToolCall, session: Session) -> PermissionRule:
    """The rule an answer to remember writes.

    "For this conversation" allows the tool, with any arguments, in this session. "Always
    this exact call" allows the tool with exactly these arguments everywhere when an admin's
    conversation asked, and only in the same person's conversations otherwise: that person
    by their platform-qualified id (``slack:U0123``), which no webhook sender can claim.
    """
    if choice == ALLOW_CONVERSATION:
        return PermissionRule(
            tool=literal(call.name),
            who=RuleWho(conversation=session.id),
            action="allow",
            note="allowed for this conversation",
        )
    who = None
    if not session.is_admin and session.user:  # this person on this platform, no other
        who = RuleWho(users=[literal(identity.person(session.address.platform, session.user))])
    return PermissionRule(
        tool=literal(call.name),
        args={name: literal(text_of(value)) for name, value in call.arguments.items()},
        exact=True,
        who=who,
        action="allow",
        note="always allow this exact call",
    )


async def record(host: Host, session: Session, call: ToolCall, decision: Decision) -> None:
    row = {
        "session_id": session.id,
        "tool": call.name,
        "arguments": json.dumps(call.arguments, ensure_ascii=False),
        "decision": "allow" if decision.allowed else "deny",
        "decided_by": decision.by,
        "reason": decision.reason,
        "created_at": time.time(),
        "tool_origin": call.tool.where_from().text(),
    }
    await host.store.run(lambda db: db.insert("approvals", row))
