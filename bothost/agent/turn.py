"""One agent turn: a person's message, model rounds, tool calls, and the reply.

Each round the model sees the system prompt, the session's visible tools and the context
that fits (:mod:`bothost.agent.compaction`: older messages summarised when they no longer
do, and the person told); the tool calls it asks for go through validation, the interlock
and approvals, run with a timeout (calls without side effects of one round run
concurrently), and come back as results — expected failures included, one round's results
sharing the context's free room — so a broken tool never ends the turn. Everything is
persisted as it happens, so a turn that is stopped or times out keeps its partial transcript.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from bothost import redact
from bothost.agent import compaction, history, interlock, spill
from bothost.agent.approvals import ToolCall, decide
from bothost.agent.compaction import Compactor
from bothost.agent.prompt import system_prompt
from bothost.agent.tools import Tool, ToolContext, ToolError, ToolResult
from bothost.api import Outcome, Reply
from bothost.llm.base import (
    BudgetSpentError,
    ChatRequest,
    LlmError,
    ToolCallRequest,
    estimate_tokens,
)
from bothost.mcp.validate import validate
from bothost.models import Session
from bothost.usage import attribution

if TYPE_CHECKING:
    from bothost.host.host import Host

logger = logging.getLogger(__name__)

TextSink = Callable[[str], Awaitable[None]]


def tool_budget(llm: Any) -> int:
    """Tokens activated servers' tool definitions may take of one request: the context
    window less the reply and the least room compaction keeps for the conversation; past
    it, a request could hold nothing else (and a provider refuses it whole), every round of
    the conversation alike."""
    return max(0, llm.context_tokens - llm.max_tokens - compaction.MIN_ROOM_TOKENS)


class Turn:
    def __init__(
        self,
        host: Host,
        session: Session,
        on_text: TextSink | None = None,
        on_status: TextSink | None = None,
        extra_tools: list[Tool] | None = None,
        system: str | None = None,
    ) -> None:
        self.host = host
        self.session = session
        self.on_text = on_text
        self.on_status = on_status
        self.streamed = ""  # the reply this round has streamed so far: kept if it is stopped
        self.extra_tools = extra_tools or []  # e.g. the tick agent's notify
        # granted groups this round could not offer, with their tool count and why
        self.left_out: dict[str, tuple[int, str]] = {}
        self.ever_left_out: dict[str, tuple[int, str]] = {}  # … any round, for the person
        self.system = system  # replaces the main prompt (the tick agent has its own)
        self.done = False  # a tool may end the turn after its round (notify does)
        self.id = uuid.uuid4().hex[:12]
        # the offline agent answers this turn: its messages are marked (history.OFFLINE)
        self.offline = host.provider_name == history.OFFLINE_AGENT
        self.messages: list[dict[str, Any]] = []
        self.refused: BudgetSpentError | None = None  # set when a usage budget stopped the turn
        self.compactor = Compactor(host, session)
        self.taint = (False, False)  # the interlock flags of what the summary stands in for
        # what the first round reads, loaded with the turn's opening write; later rounds
        # read again (their tools may have granted groups and added messages)
        self.opening: history.Opening | None = None

    async def run(self, text: str, untrusted: bool = False) -> Reply:
        """Run the turn for the person's `text`; `untrusted` when a third party wrote part
        of it (a ``/prompt``), which the interlock counts like an untrusted tool result."""
        config = self.host.config
        opening: dict[str, Any] = {"role": "user", "content": text}
        if untrusted:
            opening["untrusted"] = True
        if self.offline:
            opening[history.OFFLINE] = True
        self.messages.append(opening)
        outcome = Outcome.FAILED
        try:
            self.opening = await history.open_turn(
                self.host.store,
                self.session,
                self.id,
                opening,
                compaction.LOAD_LIMIT,
                self.host.windows,
            )
            async with asyncio.timeout(config.agent.turn_timeout):
                with attribution.for_turn(self.id, self.session):  # whose model calls these are
                    return await self.noted(await self.rounds())
        except asyncio.CancelledError:
            await self.keep_stopped()
            raise
        except TimeoutError:
            reply = f"Stopped: the turn took longer than {config.agent.turn_timeout:.0f} s."
        except BudgetSpentError as exc:  # raised before the model was asked
            self.refused, reply, outcome = exc, str(exc), Outcome.REFUSED
        except LlmError as exc:
            reply = str(exc)
        await self.add({"role": "assistant", "content": reply})
        return await self.noted(Reply(reply, outcome))

    async def keep_stopped(self) -> None:
        """Store what the stopped round had streamed, marked ``stopped``: the person saw those
        words, so a reload shows them (and that the turn was stopped) and the model reads
        them next turn. A failing write must not hide the cancellation."""
        try:
            await self.add({"role": "assistant", "content": self.streamed, "stopped": True})
        except Exception:
            logger.exception("could not store the stopped turn's reply")

    async def stream(self, delta: str) -> None:
        self.streamed += delta
        if self.on_text is not None:
            await self.on_text(delta)

    async def noted(self, reply: Reply) -> Reply:
        """``reply`` with what the person must know about their context (a compaction, a
        granted group left out: the grant stays, since whether a group fits depends on the
        request, but only the model read that its tools were missing). A left-out group is
        said once per conversation, until the set of groups left out changes."""
        notices = [*self.compactor.notices, *map(left_out_notice, self.left_out_news().items())]
        if not notices:
            return reply
        notes = "\n".join(notices)
        if self.on_text:  # every platform shows what streamed, so the notice streams too
            await self.on_text(f"\n\n{notes}" if reply.text else notes)
        text = f"{reply.text}\n\n{notes}" if reply.text else notes
        return Reply(text, reply.outcome, reply.cancelled)

    def left_out_news(self) -> dict[str, tuple[int, str]]:
        """The groups left out in this turn, if the conversation was not last told of this
        very set (:attr:`Host.told_left_out`); else none. A turn with none left out forgets
        what was told, so a group left out again later is said again."""
        told = self.host.told_left_out
        now = frozenset(self.ever_left_out)
        if told.get(self.session.id, frozenset()) == now:
            return {}
        if now:
            told[self.session.id] = now
        else:
            told.pop(self.session.id, None)
        return dict(sorted(self.ever_left_out.items()))

    async def rounds(self) -> Reply:
        config = self.host.config
        wants_catalog = getattr(self.host.llm, "wants_catalog", False)
        for _ in range(config.agent.max_rounds):
            opened, self.opening = self.opening, None
            if opened is not None:
                granted = opened.grants
            else:
                granted = await history.grants(self.host.store, self.session.id)
            await self.host.registry.settle(granted)  # a granted server may still be starting
            tools, left_out = self.host.registry.offer(
                granted, self.session.is_admin, tool_budget(config.llm), len(self.extra_tools)
            )
            self.left_out = left_out
            self.ever_left_out.update(left_out)
            tools += self.extra_tools
            specs = [t.spec() for t in tools]
            system = await system_prompt(self.host, self.session, granted, self.system, left_out)
            context = await self.compactor.fit(
                estimate_tokens(system) + estimate_tokens(specs),
                (opened.summary, opened.rows) if opened is not None else None,
            )
            self.messages, self.taint = context.messages, context.taint
            request = ChatRequest(
                system=context.system(system),
                messages=self.messages,
                tools=specs,
                load_catalog=self.catalog if wants_catalog else None,
                on_text=self.stream if self.on_text else None,
                max_tokens=config.llm.max_tokens,
            )
            self.streamed = ""
            response = await self.host.llm.complete(request)
            calls = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in response.tool_calls
            ]
            await self.add({"role": "assistant", "content": response.text, "tool_calls": calls})
            if not response.tool_calls:
                return Reply(response.text)
            visible = {t.name: t for t in tools}
            free = compaction.free(config.llm, request)  # the assistant message is in it
            for message in await self.execute(response.tool_calls, visible, free):
                await self.add(message)
            if self.done:
                return Reply(response.text)
        reply = f"Stopped after {config.agent.max_rounds} rounds of tool calls (agent.max_rounds)."
        await self.add({"role": "assistant", "content": reply})
        return Reply(reply, Outcome.FAILED)

    async def catalog(self, tool: str | None = None) -> list[dict[str, Any]]:
        """Every tool of the session, each group's with its name; with ``tool``, only the
        groups that could hold that name are started and waited for (none for a native one)."""
        registry = self.host.registry
        groups = {g.name for g in registry.groups(self.session.is_admin)}
        if tool is not None:
            groups = set() if tool in registry.native else registry.owners(tool) & groups
        await registry.settle(groups)
        listed = [{"name": t.name, "description": t.description} for t in registry.native.values()]
        for group in registry.groups(self.session.is_admin):
            listed += [
                {"name": t.name, "description": t.description, "group": group.name}
                for t in registry.group_tools(group.name)
            ]
        return listed

    async def add(self, message: dict[str, Any]) -> None:
        if self.offline:  # a model configured later does not read it (history.OFFLINE)
            message = {**message, history.OFFLINE: True}
        self.messages.append(message)
        await history.append(self.host.store, self.session.id, self.id, message)

    async def execute(
        self, requests: list[ToolCallRequest], visible: dict[str, Tool], free: int
    ) -> list[dict[str, Any]]:
        """Run one round's calls (pure ones concurrently, side effects in order); their
        results share the ``free`` tokens of the context."""
        results: dict[str, dict[str, Any]] = {}
        pure = [
            r
            for r in requests
            if r.name in visible
            and not visible[r.name].capabilities_for(r.arguments, self.session).side_effects
        ]
        effects = [r for r in requests if r not in pure]

        async def one(request: ToolCallRequest) -> None:
            results[request.id] = await self.call(request, visible.get(request.name))

        await asyncio.gather(*(one(r) for r in pure))
        for request in effects:
            await one(request)
        messages = [results[r.id] for r in requests]
        sizes = [len(m["content"]) for m in messages]
        budgets = spill.allot(free, sizes, self.host.config.agent.output_budget)
        for message, budget in zip(messages, budgets, strict=True):
            # what an untrusted tool returned a third party may have written: wrapped as such
            source = message["name"] if message["untrusted"] else None
            message["content"] = spill.cut(
                message["content"], budget, self.host.home / "spill", source=source
            )
        return messages

    async def call(self, request: ToolCallRequest, tool: Tool | None) -> dict[str, Any]:
        """The call's result as a tool message, its content not yet cut to a budget."""
        started = time.time()
        result, status = await self.checked_call(request, tool)
        # the host's own credentials never reach the model or the transcript, whatever a
        # tool echoes (a server's env, a config file it read, an error quoting a header);
        # nor do an MCP server's OAuth secrets in its own results (only there: see redact)
        scope = tool.origin.server if tool is not None and tool.origin is not None else ""
        result = dataclasses.replace(result, content=redact.conceal(result.content, scope))
        caps = tool.capabilities if tool else None
        await self.record(request, result, status, started)
        return {
            "role": "tool",
            "tool_call_id": request.id,
            "name": request.name,
            "content": result.content,
            "is_error": result.is_error,
            "private": bool(caps and caps.private and status == "ok"),
            "untrusted": bool(caps and caps.untrusted and status == "ok"),
        }

    async def checked_call(
        self, request: ToolCallRequest, tool: Tool | None
    ) -> tuple[ToolResult, str]:
        if tool is None:
            known = self.host.registry.lookup(request.name, self.session.is_admin)
            group = known.group if known else None
            if group in self.left_out:  # activating it again would change nothing
                count, why = self.left_out[group]
                hint = f" Its group {group} is active but not offered: {count} tools, {why}."
            elif group:
                hint = f" It belongs to the group {group!r}: call activate_tools first."
            else:
                hint = ""
            return ToolResult(f"Unknown tool {request.name!r}.{hint}", is_error=True), "unknown"
        if request.raw_arguments:
            return ToolResult(
                f"Arguments were not a JSON object: {request.raw_arguments[:200]}", is_error=True
            ), "invalid"
        problem = validate(tool.schema, request.arguments)
        if problem:
            return ToolResult(f"Invalid arguments: {problem}", is_error=True), "invalid"
        # the call's egress, not only the tool's: schedule to another conversation is chosen
        caps = tool.capabilities_for(request.arguments, self.session)
        refused = interlock.refusal(tool, self.messages, self.taint, caps)
        if refused:
            return ToolResult(refused, is_error=True), "interlock"
        decision = await decide(
            self.host, self.session, ToolCall(request.name, request.arguments, tool)
        )
        if not decision.allowed:
            return ToolResult(f"Not allowed: {decision.reason}.", is_error=True), "denied"
        return await self.invoke(request, tool), "ok"

    async def invoke(self, request: ToolCallRequest, tool: Tool) -> ToolResult:
        timeout: float | None = tool.timeout or self.host.config.agent.tool_timeout
        if tool.own_deadline:  # MCP calls: the MCP layer's deadline; stop still cancels at once
            timeout = None
        ctx = ToolContext(
            session=self.session,
            host=self.host,
            call_id=request.id,
            progress=self.on_status,
            beside=len(self.extra_tools),
        )
        if self.on_status is not None:  # a tool may run long: the person sees which one
            await self.on_status(f"Running {request.name}…")
        try:
            async with asyncio.timeout(timeout):
                value = await tool.run(request.arguments, ctx)
        except ToolError as exc:
            return ToolResult(str(exc), is_error=True)
        except TimeoutError:
            after = f" after {timeout:g} s" if timeout is not None else ""
            return ToolResult(f"{tool.name} timed out{after}.", is_error=True)
        except Exception:
            ref = uuid.uuid4().hex[:8]
            logger.exception("tool %s failed (ref %s)", tool.name, ref)
            return ToolResult(
                f"{tool.name} failed unexpectedly (ref {ref} in the log).", is_error=True
            )
        return as_result(value)

    async def record(
        self, request: ToolCallRequest, result: ToolResult, status: str, started: float
    ) -> None:
        row = {
            "session_id": self.session.id,
            "turn_id": self.id,
            "call_id": request.id,
            "tool": request.name,
            "arguments": json.dumps(request.arguments, ensure_ascii=False),
            "result": result.content[:100_000],
            "is_error": int(result.is_error),
            "error": result.content[:500] if result.is_error else None,
            "status": status,
            "duration_ms": (time.time() - started) * 1000,
            "started_at": started,
        }
        await self.host.store.run(lambda db: db.insert("tool_calls", row))


def left_out_notice(group_left_out: tuple[str, tuple[int, str]]) -> str:
    group, (count, why) = group_left_out
    return (
        f"Note: {group} stays active in this conversation, but its {count} tools were not "
        f"offered to the model: {why}."
    )


def as_result(value: Any) -> ToolResult:
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult("(no output)")
    if isinstance(value, str):
        return ToolResult(value)
    return ToolResult(
        json.dumps(value, ensure_ascii=False, indent=1, default=str), structured=value
    )
