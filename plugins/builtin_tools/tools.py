"""The implementations of the built-in tools (the plugin module only registers them)."""

from __future__ import annotations

from bothost.agent import history, spill
from bothost.agent.tools import ToolContext, ToolError


async def activate_tools(groups: list[str], ctx: ToolContext) -> str:
    """Make the tools of one or more tool groups (MCP servers, or `config`) available.

    Their tools appear from your next step on, for the rest of this conversation.

    Args:
        groups: group names from the tool groups table, e.g. ["weather"].
    """
    registry = ctx.host.registry
    known = {g.name: g for g in registry.groups(ctx.session.is_admin)}
    unknown = [g for g in groups if g not in known]
    if unknown:
        raise ToolError(f"Unknown tool group(s): {', '.join(unknown)}. "
                        f"Available: {', '.join(sorted(known)) or 'none'}.")
    await history.grant(ctx.host.store, ctx.session.id, groups)
    lines = []
    for name in groups:
        tools = registry.group_tools(name)
        lines.append(f"{name}: {len(tools)} tools now available"
                     + (f" ({', '.join(t.name for t in tools[:12])})" if tools else ""))
    return "\n".join(lines)


async def read_output(ref: str, ctx: ToolContext, offset: int = 0) -> str:
    """Read more of a tool output that was cut because it was too long.

    Args:
        ref: the reference given in the cut marker.
        offset: the character offset to read from.
    """
    try:
        return spill.read(ctx.host.home / "spill", ref, offset,
                          spill.chunk_size(ctx.host.config.agent.output_budget))
    except ValueError as exc:
        raise ToolError(str(exc)) from None
