"""The implementations of the built-in tools (the plugin module only registers them).

They reach the host only through ``ctx.host`` (:class:`bothost.api.HostApi`).
"""

from __future__ import annotations

from bothost.agent.tools import MAX_OFFERED, ToolContext, ToolError


async def activate_tools(groups: list[str], ctx: ToolContext) -> str:
    """Open tool groups; their tools appear in your next step.

    They stay available for the rest of this conversation.

    Args:
        groups: e.g. ["weather"].
    """
    known = {g.name: g for g in ctx.host.tool_groups(ctx.session)}
    unknown = [g for g in groups if g not in known]
    if unknown:
        raise ToolError(
            f"Unknown tool group(s): {', '.join(unknown)}. "
            f"Available: {', '.join(sorted(known)) or 'none'}."
        )
    await ctx.host.grant_tools(ctx.session, groups)
    # what the next request offers, as it computes it (bothost.agent.registry)
    left_out = await ctx.host.not_offered(ctx.session, ctx.beside)
    lines = []
    for name in groups:
        tools = ctx.host.group_tools(name)
        if len(tools) > MAX_OFFERED:
            lines.append(
                f"{name}: {len(tools)} tools, more than the {MAX_OFFERED} one request may "
                "offer: not offered (the operator can choose some with "
                f"mcp.servers.{name}.tools)"
            )
            continue
        if name in left_out:
            count, why = left_out[name]
            lines.append(f"{name}: {count} tools, not offered: {why}")
            continue
        lines.append(
            f"{name}: {len(tools)} tools now available"
            + (f" ({', '.join(t.name for t in tools[:12])})" if tools else "")
        )
    return "\n".join(lines)


async def read_output(ref: str, ctx: ToolContext, offset: int = 0) -> str:
    """Read more of a tool output that was cut because it was too long.

    Args:
        ref: the reference given in the cut marker.
        offset: the character offset to read from.
    """
    try:
        return ctx.host.read_spill(ref, offset)
    except ValueError as exc:
        raise ToolError(str(exc)) from None
