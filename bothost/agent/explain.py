"""``bothost rules test``: which rule decides a call, and why, without running anything.

The decision is the one a turn would make (:func:`bothost.agent.approvals.evaluate`: the
policy hook, the rules, the default, a remembered answer), for a person the caller names.
The tool's capabilities matter to the default, so the tool is looked up: native and admin
tools in the registry, an MCP tool in a running host's published listing of its server, or
else by starting its server for the length of the command (saying so in one line).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from bothost.agent.approvals import ToolCall, evaluate
from bothost.agent.mcp_tools import PREFIX, McpToolSource, listed_origin, tool_name
from bothost.agent.tools import Tool
from bothost.mcp import commands
from bothost.mcp.manager import McpManagerError
from bothost.models import Session
from bothost.rules.origin import Origin, pinnable

if TYPE_CHECKING:
    from bothost.host.host import Host

logger = logging.getLogger(__name__)

ARGS_SHOWN = 200  # characters of the arguments echoed on the first line


@dataclass
class Explanation:
    tool: str
    arguments: dict[str, Any]
    session: Session
    action: str  # allow | ask | deny
    reason: str
    rule: dict[str, Any] | None = None  # the deciding rule, with its place in the order
    matched: list[str] = field(default_factory=list)
    answer: dict[str, Any] | None = None  # a remembered answer that says yes instead
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        args = json.dumps(self.arguments, ensure_ascii=False)
        who = self.session
        person = f"user {who.user or '-'}, {'an admin' if who.is_admin else 'not an admin'}"
        out = [f"{self.action}: {self.tool} {args[:ARGS_SHOWN]}  (in {who.address}, {person})"]
        if self.rule is not None:
            out.append(
                f"  rule {self.rule['position']} ({self.rule['ref']}, {self.rule['origin']}): "
                + "; ".join(self.matched)
            )
        out.append(f"  {self.reason}")
        if self.answer is not None:
            out.append(
                f"  remembered answer {self.answer['ref']} says yes instead of asking: "
                + "; ".join(self.answer["matched"])
            )
        out += [f"  note: {n}" for n in self.notes]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "arguments": self.arguments,
            "session": str(self.session.address),
            "user": self.session.user,
            "admin": self.session.is_admin,
            "action": self.action,
            "reason": self.reason,
            "rule": self.rule,
            "matched": self.matched,
            "remembered": self.answer,
            "notes": self.notes,
        }


async def explain(
    host: Host, name: str, arguments: dict[str, Any], session: Session, tool: Tool | None
) -> Explanation:
    """How a call of ``name`` by ``session`` would be decided (``tool``: None if unknown)."""
    known = tool is not None
    if tool is None:

        async def nothing(arguments: dict[str, Any], ctx: Any) -> None:
            return None

        tool = Tool(name=name, description="", schema={}, run=nothing)
    call = ToolCall(name, arguments, tool)
    evaluation = await evaluate(host, session, call)
    plan = evaluation.plan
    result = Explanation(name, arguments, session, plan.action, plan.reason)
    if not known and plan.by in ("auto", "mode", "default"):
        result.notes.append(
            f"no tool {name!r} is known here, so the default took it to have no capability "
            "that needs approval; a destructive or egress: chosen tool follows agent.approval"
        )
    if plan.match is not None:
        rule = plan.match.rule
        position = evaluation.order.index(rule) + 1
        result.rule = {**rule.to_dict(), "position": position}
        result.matched = list(plan.match.fields)
        over = plan.match.over
        if over is not None:  # a deny that beat an ask above it (deciding_match)
            place = evaluation.order.index(over) + 1
            result.rule["over"] = {"ref": over.ref, "position": place}
            result.matched.append(
                f"a deny beats the ask of rule {place} ({over.ref}), which matched first"
            )
    if evaluation.answer is not None:
        result.answer = {**evaluation.answer.rule.to_dict(), "matched": evaluation.answer.fields}
    if call.capabilities(session).egress == "chosen" and plan.action != "deny":
        result.notes.append(
            "egress: chosen — the interlock still refuses it in a conversation that holds "
            "private data and untrusted content, whatever the rules say"
        )
    return result


async def pin(
    host: Host, name: str, notice: Callable[[str], None] | None = None
) -> tuple[Origin | None, str]:
    """The origin a stored rule naming ``name`` keeps (:func:`bothost.rules.match.match_tool`):
    that of the MCP tool so named now; None, with why, when the name is a glob or a native
    tool's (it names tools by pattern) or no tool is so named. A running host's published
    listing of the server answers without starting it; else the server is started to ask
    (``notice`` is told so first, in one line)."""
    if not pinnable(name):
        return None, ""
    origin = await listed(host, name)
    if origin is not None:
        return origin, ""
    tool, problem = await find_tool(host, name, notice)
    if tool is None:
        return None, problem or f"no MCP tool is called {name} now"
    return tool.where_from(), ""


async def listed(host: Host, name: str) -> Origin | None:
    """The origin of the tool called ``name`` in the running host's published listing of its
    server (bothost.mcp.manager), if that host runs the server as the config says now (the
    same ``source``: the same command and arguments, or URL); None otherwise."""
    for server, listing in (await live(host, name)).items():
        origin = listed_origin(server, listing, name)
        if origin is not None:
            return origin
    return None


async def live(host: Host, name: str | None = None) -> dict[str, dict[str, Any]]:
    """The running host's published listings of the servers whose tools could be called
    ``name`` (None: of every server), of those it runs as the config says now (the same
    ``source``: the same command and arguments, or URL; else only the server itself can
    say), by server name."""
    listings = commands.live_listings(host.home)
    if not listings:
        return {}
    manager = commands.manager_for(host.config, host.store, host.home)
    await manager.reload()
    out = {}
    for server in sorted(commands.enabled_names(manager)):
        listing = listings.get(server)
        if not isinstance(listing, dict):
            continue
        if name is not None and not name.startswith(tool_name(server, "")):
            continue
        if listing.get("source") == manager.source(server):
            out[server] = listing
    return out


class ListedManager:
    """Just enough of the MCP manager for :class:`McpToolSource` to make the tools of
    servers from a running host's published listings: names, hints, resources, source."""

    def __init__(self, listings: dict[str, dict[str, Any]]) -> None:
        self.listings = listings

    def status(self) -> list[Any]:
        return [SimpleNamespace(name=n, state="ready") for n in self.listings]

    def tools(self, server: str) -> list[dict[str, Any]]:
        listing = self.listings[server]
        hints = listing["hints"]
        return [
            {"name": t, **(hints[t] if isinstance(hints.get(t), dict) else {})}
            for t in listing["tools"]
            if isinstance(t, str)
        ]

    def capabilities(self, server: str) -> dict[str, Any]:
        return {"resources": {}} if self.listings[server].get("resources") else {}

    def source(self, server: str) -> str:
        return str(self.listings[server]["source"])


def with_hints(listings: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Those of ``listings`` a :class:`ListedManager` can make tools of: not those from a
    host that published no ``hints`` (capabilities the default depends on)."""
    return {
        s: v
        for s, v in listings.items()
        if isinstance(v.get("tools"), list) and isinstance(v.get("hints"), dict)
    }


async def listed_tool(host: Host, name: str) -> Tool | None:
    """The tool called ``name`` as a running host's published listing makes it (origin and
    capabilities; it is not run); None when no listing there holds it, or one from a host
    that published no ``hints`` (capabilities the default depends on)."""
    listings = with_hints(await live(host, name))
    source = McpToolSource(ListedManager(listings), host.config)
    for server in listings:
        for tool in source.tools(server):
            if tool.name == name:
                return tool
    return None


async def find_tool(
    host: Host, name: str, notice: Callable[[str], None] | None = None
) -> tuple[Tool | None, str]:
    """The tool named ``name`` and, when it could not be looked up, why. An MCP tool comes
    from a running host's published listing if it lists it, else its server is started to
    ask (``notice``, if given, is told so first, in one line)."""
    tool = host.registry.lookup(name, True)
    if tool is not None:
        return tool, ""
    if not name.startswith(PREFIX):
        return None, ""
    tool = await listed_tool(host, name)
    if tool is not None:
        return tool, ""
    manager = commands.manager_for(host.config, host.store, host.home)
    await manager.reload()
    servers = [s for s in commands.enabled_names(manager) if name.startswith(tool_name(s, ""))]
    for server in sorted(servers):
        if notice is not None:
            notice(f"Starting MCP server {server} to look up {name} (no running host lists it).")
        try:
            async with commands.private(manager, {server}):
                for candidate in McpToolSource(manager, host.config).tools(server):
                    if candidate.name == name:
                        return candidate, ""
        except McpManagerError as exc:
            return None, f"MCP server {server} could not be asked for its tools: {exc}"
    return None, ""
