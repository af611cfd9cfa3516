"""One agent turn: a person's message, model rounds, tool calls, and the reply.

Each round the model sees the system prompt, the trimmed context and the session's visible
tools; the tool calls it asks for go through validation, the interlock and approvals, run
with a timeout (calls without side effects of one round run concurrently), and come back as
results — expected failures included — so a broken tool never ends the turn. Everything is
persisted as it happens, so a turn that is stopped or times out keeps its partial transcript.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from bothost.agent import history, interlock, spill
from bothost.agent.approvals import ToolCall, decide
from bothost.agent.prompt import system_prompt
from bothost.agent.tools import Tool, ToolContext, ToolError, ToolResult
from bothost.agent.validate import validate
from bothost.api import Outcome, Reply
from bothost.llm.base import BudgetSpentError, ChatRequest, LlmError, ToolCallRequest
from bothost.models import Session
from bothost.usage import attribution

if TYPE_CHECKING:
    from bothost.host import Host

logger = logging.getLogger(__name__)

TextSink = Callable[[str], Awaitable[None]]


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
        self.extra_tools = extra_tools or []  # e.g. the tick agent's notify
        self.system = system  # replaces the main prompt (the tick agent has its own)
        self.done = False  # a tool may end the turn after its round (notify does)
        self.id = uuid.uuid4().hex[:12]
        self.messages: list[dict[str, Any]] = []
        self.refused: BudgetSpentError | None = None  # set when a usage budget stopped the turn

    async def run(self, text: str, untrusted: bool = False) -> Reply:
        """Run the turn for the person's `text`; `untrusted` when a third party wrote part
        of it (a ``/prompt``), which the interlock counts like an untrusted tool result."""
        config = self.host.config
        await history.ensure_session(self.host.store, self.session)
        opening: dict[str, Any] = {"role": "user", "content": text}
        if untrusted:
            opening["untrusted"] = True
        await self.add(opening)
        budget = max(1000, config.llm.context_tokens - config.llm.max_tokens)
        outcome = Outcome.FAILED
        try:
            async with asyncio.timeout(config.agent.turn_timeout):
                with attribution.for_turn(self.id, self.session):  # whose model calls these are
                    return await self.rounds(budget)
        except TimeoutError:
            reply = f"Stopped: the turn took longer than {config.agent.turn_timeout:.0f} s."
        except BudgetSpentError as exc:  # raised before the model was asked
            self.refused, reply, outcome = exc, str(exc), Outcome.REFUSED
        except LlmError as exc:
            reply = str(exc)
        await self.add({"role": "assistant", "content": reply})
        return Reply(reply, outcome)

    async def rounds(self, budget: int) -> Reply:
        config = self.host.config
        wants_catalog = getattr(self.host.llm, "wants_catalog", False)
        for _ in range(config.agent.max_rounds):
            self.messages = await history.context(self.host.store, self.session.id, budget)
            granted = await history.grants(self.host.store, self.session.id)
            await self.host.registry.settle(granted)  # a granted server may still be starting
            tools = self.host.registry.visible(granted, self.session.is_admin) + self.extra_tools
            request = ChatRequest(
                system=await system_prompt(self.host, self.session, granted, self.system),
                messages=self.messages,
                tools=[t.spec() for t in tools],
                load_catalog=self.catalog if wants_catalog else None,
                on_text=self.on_text,
                max_tokens=config.llm.max_tokens,
            )
            response = await self.host.llm.complete(request)
            calls = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in response.tool_calls
            ]
            await self.add({"role": "assistant", "content": response.text, "tool_calls": calls})
            if not response.tool_calls:
                return Reply(response.text)
            visible = {t.name: t for t in tools}
            for message in await self.execute(response.tool_calls, visible):
                await self.add(message)
            if self.done:
                return Reply(response.text)
        reply = f"Stopped after {config.agent.max_rounds} rounds of tool calls (agent.max_rounds)."
        await self.add({"role": "assistant", "content": reply})
        return Reply(reply, Outcome.FAILED)

    async def catalog(self) -> list[dict[str, Any]]:
        registry = self.host.registry
        await registry.settle({g.name for g in registry.groups(self.session.is_admin)})
        listed = [{"name": t.name, "description": t.description} for t in registry.native.values()]
        for group in registry.groups(self.session.is_admin):
            listed += [
                {"name": t.name, "description": t.description, "group": group.name}
                for t in registry.group_tools(group.name)
            ]
        return listed

    async def add(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        await history.append(self.host.store, self.session.id, self.id, message)

    async def execute(
        self, requests: list[ToolCallRequest], visible: dict[str, Tool]
    ) -> list[dict[str, Any]]:
        """Run one round's calls: pure ones concurrently, side effects in order."""
        results: dict[str, dict[str, Any]] = {}
        pure = [
            r
            for r in requests
            if r.name in visible and not visible[r.name].capabilities.side_effects
        ]
        effects = [r for r in requests if r not in pure]

        async def one(request: ToolCallRequest) -> None:
            results[request.id] = await self.call(request, visible.get(request.name))

        await asyncio.gather(*(one(r) for r in pure))
        for request in effects:
            await one(request)
        return [results[r.id] for r in requests]

    async def call(self, request: ToolCallRequest, tool: Tool | None) -> dict[str, Any]:
        started = time.time()
        result, status = await self.checked_call(request, tool)
        caps = tool.capabilities if tool else None
        # whatever an untrusted tool returned, errors included, a third party may have written
        source = tool.name if tool and caps and caps.untrusted and status == "ok" else None
        content = spill.cut(
            result.content,
            self.host.config.agent.output_budget,
            self.host.home / "spill",
            source=source,
        )
        await self.record(request, result, status, started)
        return {
            "role": "tool",
            "tool_call_id": request.id,
            "name": request.name,
            "content": content,
            "is_error": result.is_error,
            "private": bool(caps and caps.private and status == "ok"),
            "untrusted": bool(caps and caps.untrusted and status == "ok"),
        }

    async def checked_call(
        self, request: ToolCallRequest, tool: Tool | None
    ) -> tuple[ToolResult, str]:
        if tool is None:
            known = self.host.registry.lookup(request.name, self.session.is_admin)
            hint = (
                f" It belongs to the group {known.group!r}: call activate_tools first."
                if known and known.group
                else ""
            )
            return ToolResult(f"Unknown tool {request.name!r}.{hint}", is_error=True), "unknown"
        if request.raw_arguments:
            return ToolResult(
                f"Arguments were not a JSON object: {request.raw_arguments[:200]}", is_error=True
            ), "invalid"
        problem = validate(tool.schema, request.arguments)
        if problem:
            return ToolResult(f"Invalid arguments: {problem}", is_error=True), "invalid"
        refused = interlock.refusal(tool, self.messages)
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
            session=self.session, host=self.host, call_id=request.id, progress=self.on_status
        )
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
        await self.host.store.run(lambda db: db.table("tool_calls").insert(row))


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
