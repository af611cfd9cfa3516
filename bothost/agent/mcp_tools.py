"""MCP servers as a tool source of the agent's registry: names, capabilities, calls.

Each running server is a group of tools named ``mcp__<server>__<tool>`` (sanitised to
``[A-Za-z0-9_-]``, at most 64 characters, unique). Capabilities follow DESIGN: a tool with
no ``annotations`` is ``private`` only; with annotations the MCP defaults apply
(``readOnlyHint`` → no side effects, untrusted unless ``openWorldHint`` is false; else
``destructiveHint`` default true → destructive, ``openWorldHint`` default true → untrusted
and chosen egress); a server may state them
exactly in ``_meta["bothost/capabilities"]``; config (``mcp.servers.<name>.capabilities``)
may only add. Calls go through the manager, with progress shown as the turn's status and
elicitations asked through the session's platform.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from bothost.agent.registry import Group
from bothost.agent.tools import EGRESS, Capabilities, Tool, ToolContext, ToolError, ToolResult

PREFIX = "mcp__"
MAX_NAME = 64  # OpenAI and Anthropic both refuse longer tool names
UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
META_KEY = "bothost/capabilities"
EMPTY_SCHEMA = {"type": "object", "properties": {}}
MAX_ASKERS = 1000  # sessions remembered; forgetting one only costs a new closure


def tool_name(server: str, tool: str) -> str:
    name = f"{PREFIX}{UNSAFE.sub('_', server)}__{UNSAFE.sub('_', tool)}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    return f"{name[:MAX_NAME - 9]}_{digest}"


def capabilities(definition: dict[str, Any], extra: list[str] | None = None) -> Capabilities:
    meta = (definition.get("_meta") or {}).get(META_KEY)
    if isinstance(meta, dict):
        egress = meta.get("egress", "none")
        caps = Capabilities(private=bool(meta.get("private")),
                            untrusted=bool(meta.get("untrusted")),
                            egress=egress if egress in EGRESS else "chosen",
                            destructive=bool(meta.get("destructive")))
    else:
        annotations = definition.get("annotations")
        if not isinstance(annotations, dict):
            caps = Capabilities(private=True)
        elif annotations.get("readOnlyHint") is True:
            open_world = annotations.get("openWorldHint", True) is not False
            caps = Capabilities(untrusted=open_world)
        else:
            open_world = annotations.get("openWorldHint", True) is not False
            caps = Capabilities(untrusted=open_world,
                                egress="chosen" if open_world else "none",
                                destructive=annotations.get("destructiveHint", True) is not False)
    return caps.plus(extra or [])


class McpToolSource:
    """The registry's view of the MCP manager: one group per enabled server."""

    def __init__(self, manager: Any, config: Any) -> None:
        self.manager = manager
        self.config = config
        # one ask callable per session, so the client can tell that concurrent calls of a
        # session share their asker when a stdio server's elicitation names no call
        self.askers: dict[tuple[str, int], Any] = {}

    def asker(self, session: Any) -> Any:
        platform = getattr(session, "platform", None)
        key = (session.id, id(platform))
        if key not in self.askers:
            async def ask(question: Any) -> Any:
                if platform is None:
                    return None
                question.user = session.user
                return await platform.ask(session.address, question)

            if len(self.askers) > MAX_ASKERS:
                self.askers.clear()
            self.askers[key] = ask
        return self.askers[key]

    def server_config(self, name: str) -> Any:
        return self.config.mcp.servers.get(name)

    def groups(self) -> list[Group]:
        out = []
        for status in self.manager.status():
            if not status.enabled or status.state in ("shadowed", "disabled"):
                continue
            server = self.server_config(status.name)
            description = getattr(server, "description", "") or status.note or status.target
            out.append(Group(name=status.name, description=description[:100],
                             tool_count=status.tools, status=status.state))
        return out

    def tools(self, group: str) -> list[Tool]:
        server = self.server_config(group)
        extra = getattr(server, "capabilities", {}) or {}
        timeout = getattr(server, "timeout", None)
        tools = []
        for definition in self.manager.tools(group):
            raw_name = definition.get("name", "")
            tools.append(Tool(
                name=tool_name(group, raw_name),
                description=(definition.get("description") or definition.get("title")
                             or raw_name)[:1024],
                schema=definition.get("inputSchema") or EMPTY_SCHEMA,
                run=self.runner(group, raw_name),
                capabilities=capabilities(definition, extra.get(raw_name, []) + extra.get("*", [])),
                timeout=timeout, group=group, plugin=f"mcp:{group}",
            ))
        return tools

    def runner(self, server: str, tool: str) -> Any:
        async def run(arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
            async def progress(value: Any, total: Any = None, message: Any = None) -> None:
                if ctx.progress is None:
                    return
                shown = f"{value}/{total}" if total else f"{value}"
                await ctx.progress(f"{server}/{tool}: {message or ''} ({shown})".strip())

            result = await self.manager.call_tool(server, tool, arguments, on_progress=progress,
                                                  ask=self.asker(ctx.session))
            if result.is_error and not result.text:
                raise ToolError(f"{server}/{tool} failed")
            links = [f"/media/{p.name}" for p in result.media]
            return ToolResult(result.text, is_error=result.is_error,
                              structured=result.structured, media=links)

        return run
