"""Sampling: an MCP server asks the host's model, with a person's yes, within the budgets.

Off unless a server's config says ``sampling: true`` (then the client declares the
capability: :mod:`bothost.mcp.sampling`). A request arrives while one of the server's tool
calls runs, and belongs to that call's conversation: the call's
:class:`~bothost.mcp.elicitation.Asker` carries a :class:`Conversation` (the session and
the turn's usage attribution, captured when the call began; the request itself is handled
in another task, where the turn's context variable is not set).

1. **Approval.** Remembered answers are consulted first, as for tools (they are stored with
   the rules, kind ``answer``, and name the server's sampling by its origin: kind
   ``sampling``, the server and what it runs, :mod:`bothost.rules.origin`). Otherwise the
   person in the conversation is asked, with what the server sent, and may answer "allow
   for this conversation" or "always allow this server" (an admin's "always" holds in every
   conversation and outside them; anyone else's in their own conversations only). A request
   with no conversation to ask in (during a tick, an idle server, calls of several
   conversations in flight over stdio) is refused unless such an "always" covers it.
   Every decision goes to the ``approvals`` record, under the name ``sampling:SERVER``.
2. **Budgets and usage.** The model call is the conversation's: the person's daily budget
   and the global one apply (the tick's, when a tick's turn made the call), and its
   ``llm_usage`` row names the server in ``mcp_server``. A spent budget is an error answer.
3. **The call.** :mod:`bothost.agent.sampling_messages` builds what the model reads (the
   server's text untrusted, ``maxTokens`` capped, tools as the spec allows) and the answer.

Refusals are JSON-RPC errors the server can read: ``-1`` for a person's no (as the spec's
example), -32602 for a request the host will not make, -32603 for a budget or model failure.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bothost import identity
from bothost.agent import approvals, sampling_messages
from bothost.agent.approvals import Decision, ToolCall
from bothost.agent.tools import Tool
from bothost.config import PermissionRule, RuleWho
from bothost.llm.base import LlmError
from bothost.mcp import jsonrpc
from bothost.mcp.elicitation import Asker
from bothost.mcp.jsonrpc import McpError
from bothost.models import Address, Session
from bothost.platform import ALLOW_ALWAYS, ALLOW_CONVERSATION, Choice, Question
from bothost.rules import store as rule_store
from bothost.rules.match import first_match, literal
from bothost.rules.origin import SAMPLING, Origin
from bothost.usage.attribution import Attribution, attributed

if TYPE_CHECKING:
    from bothost.host.host import Host

logger = logging.getLogger(__name__)

REJECTED = -1  # the spec's example code for a person's no
MAX_SHOWN = 600  # characters of the server's text shown in the question


@dataclass(frozen=True)
class Conversation:
    """What a sampling request needs of the conversation whose tool call it came during."""

    session: Session
    attribution: Attribution


def name_of(server: str) -> str:
    """How remembered answers and the approvals record name `server`'s sampling."""
    return f"sampling:{server}"


def sampler(host: Host) -> Callable[[str, dict[str, Any], Asker | None], Awaitable[dict]]:
    """The host's sampler, for the MCP manager: ``(server, params, asker)``."""

    async def sample(server: str, params: dict[str, Any], asker: Asker | None) -> dict:
        return await create_message(host, server, params, asker)

    return sample


async def create_message(
    host: Host, server: str, params: dict[str, Any], asker: Asker | None
) -> dict[str, Any]:
    """Answer one checked ``sampling/createMessage`` (module docstring); raises McpError."""
    context = asker.context if asker is not None else None
    conversation = context if isinstance(context, Conversation) else None
    try:
        chat = sampling_messages.request(params, server)
    except sampling_messages.SamplingRequestError as exc:
        raise McpError(jsonrpc.INVALID_PARAMS, f"sampling request refused: {exc}") from None
    llm = host.llm
    if getattr(llm, "free", False):  # the offline agent: there is no model to ask
        raise McpError(jsonrpc.INTERNAL_ERROR, "this host has no model (llm.provider is offline)")
    decision = await approve(host, server, conversation, params)
    if not decision.allowed:
        raise McpError(REJECTED, f"sampling request refused: {decision.reason}")
    who = conversation.attribution if conversation is not None else Attribution()
    with attributed(dataclasses.replace(who, server=server)):
        try:
            response = await llm.complete(chat)
        except LlmError as exc:  # a spent budget is one: its message says which and why
            raise McpError(jsonrpc.INTERNAL_ERROR, str(exc)) from None
    model = getattr(llm, "model_name", None) or host.config.llm.model or "unknown"
    return sampling_messages.result(response, str(model))


def origin_of(host: Host, server: str) -> Origin:
    source = host.mcp.source(server) if host.mcp is not None else ""
    return Origin(SAMPLING, "createMessage", server, source)


def nobody(server: str) -> Session:
    """The session a request outside any conversation is matched and recorded as."""
    return Session(id=name_of(server), address=Address("mcp", server))


async def approve(
    host: Host, server: str, conversation: Conversation | None, params: dict[str, Any]
) -> Decision:
    """A remembered answer, else the person's; recorded either way."""
    origin = origin_of(host, server)
    name = name_of(server)
    call = ToolCall(name, {}, Tool(name, "", {}, refuse_run, group=server, origin=origin))
    session = conversation.session if conversation is not None else nobody(server)
    _rules, remembered = await host.store.run(rule_store.load)
    found = first_match(remembered, name, {}, session, origin)
    if found is not None:
        decision = Decision(True, f"remembered {found.rule.ref}")
    elif conversation is None or session.platform is None:
        decision = Decision(False, "nobody", "no conversation to ask in")
    else:
        decision = await ask(host, session, server, params, origin)
    await approvals.record(host, session, call, decision)
    return decision


async def refuse_run(arguments: dict[str, Any], ctx: Any) -> Any:
    raise RuntimeError("sampling is not a tool the model may call")


def question_text(server: str, params: dict[str, Any]) -> str:
    """What the person is shown: who asks, how much, and the end of what the server sent."""
    limit = min(params["maxTokens"], sampling_messages.MAX_SAMPLING_TOKENS)
    tools = [t.get("name") for t in params.get("tools") or [] if isinstance(t, dict)]
    offered = f", offering it the tools {', '.join(map(str, tools[:10]))}" if tools else ""
    last = params["messages"][-1]
    sent = "\n".join(
        sampling_messages.block_text(b) for b in sampling_messages.blocks(last.get("content"))
    )
    sent = " ".join(sent.split())
    if len(sent) > MAX_SHOWN:
        sent = "…" + sent[-MAX_SHOWN:]
    system = " ".join(str(params.get("systemPrompt") or "").split())[:200]
    lines = [f"MCP server {server} asks the model for a reply of up to {limit} tokens{offered}."]
    if system:
        lines.append(f"Its instructions: {system}")
    lines.append(f"It sent: {sent}")
    lines.append("Allow?")
    return "\n".join(lines)


async def ask(
    host: Host, session: Session, server: str, params: dict[str, Any], origin: Origin
) -> Decision:
    question = Question(
        text=question_text(server, params),
        kind="approval",
        user=session.user,
        timeout=host.config.agent.approval_timeout,
        choices=[
            Choice(ALLOW_CONVERSATION, "Allow for this conversation"),
            Choice(ALLOW_ALWAYS, f"Always allow {server} to ask the model"),
        ],
    )
    asked = await approvals.put_question(session, question, f"{server}'s sampling")
    if isinstance(asked, Decision):
        return asked
    answer, who = asked
    if answer in (ALLOW_CONVERSATION, ALLOW_ALWAYS):
        rule = remembered(answer, server, session)
        by = identity.person(session.address.platform, str(who))  # the platform vouches
        rule_id = await host.store.run(
            lambda db: rule_store.add(db, rule, by, kind=rule_store.ANSWER, tool_origin=origin)
        )
        return Decision(True, str(who), f"remembered as #{rule_id}")
    return Decision(bool(answer), str(who), "" if answer else "the user said no")


def remembered(choice: str, server: str, session: Session) -> PermissionRule:
    """The answer kept: this conversation, or always (an admin's anywhere, anyone else's in
    their own conversations, by their platform-qualified id)."""
    if choice == ALLOW_CONVERSATION:
        return PermissionRule(
            tool=literal(name_of(server)),
            who=RuleWho(conversation=session.id),
            action="allow",
            note="sampling allowed for this conversation",
        )
    who = None
    if not session.is_admin and session.user:
        who = RuleWho(users=[literal(identity.person(session.address.platform, session.user))])
    return PermissionRule(
        tool=literal(name_of(server)), who=who, action="allow", note="always allow sampling"
    )
