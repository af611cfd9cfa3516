"""The reserved ``config`` tool group: admin tools that change the host while it runs.

``register_mcp`` (which makes the host run a command, so it always needs an admin's yes,
even in approval mode ``allow``), ``delete_mcp``, ``toggle_item`` and ``list_items``. The
group exists only for admins (Slack ``admins``, the terminal, the local web UI); changes go
through the MCP manager, which writes them to the ``mcp_servers`` table and applies them
at once — never into a YAML file.
"""

from __future__ import annotations

from typing import Any

from bothost.agent.registry import Group
from bothost.agent.tools import Tool, ToolContext, ToolError, tool_from_function
from bothost.config import McpServerConfig
from bothost.mcp.commands import duration

GROUP = "config"
START_WAIT = 30.0  # seconds register_mcp waits for the new server to be ready or fail


async def register_mcp(
    name: str,
    ctx: ToolContext,
    command: str | None = None,
    args: list[str] | None = None,
    url: str | None = None,
    env: dict | None = None,
    description: str = "",
    timeout: str | None = None,
    max_timeout: str | None = None,
    singleton: bool | None = None,
    roots: list[str] | None = None,
) -> str:
    """Add an MCP server (a command to run, or a Streamable HTTP URL) and start it.

    Args:
        name: a short name (letters, digits, _ and -).
        command: the program to run for a stdio server.
        args: its arguments.
        url: the URL of a Streamable HTTP server (instead of a command).
        env: extra environment variables for the server.
        description: one line saying what the server is for.
        timeout: how long a tool call may go without news, e.g. "90s" (default 60s).
        max_timeout: how long progress may keep a call going, e.g. "30m" (default 10m).
        singleton: true for a server that pushes events, so that of several hosts sharing
            one database only the leader runs it (default: true for the bundled watchers).
        roots: directories the server is told to work in (MCP roots), as absolute paths.
    """
    config = McpServerConfig(
        command=command,
        args=list(args or []),
        url=url,
        env={str(k): str(v) for k, v in (env or {}).items()},
        description=description,
        singleton=singleton,
        roots=[str(root) for root in roots or []],
    )
    try:
        if timeout:
            config.timeout = duration(timeout, "timeout")
        if max_timeout:
            config.max_timeout = duration(max_timeout, "max_timeout")
        status = await ctx.host.add_mcp_server(name, config, "register_mcp", START_WAIT)
    except ValueError as exc:  # the host's "cannot make this change", said for the person
        raise ToolError(str(exc)) from None
    detail = f" ({status.error})" if status.error else ""
    return f"MCP server {name}: {status.state}{detail}, {status.tools} tools."


async def delete_mcp(name: str, ctx: ToolContext) -> str:
    """Remove an MCP server that was added at run time (not one from the config file).

    Args:
        name: the server's name.
    """
    try:
        await ctx.host.remove_mcp_server(name)
    except ValueError as exc:
        raise ToolError(str(exc)) from None
    return f"MCP server {name} removed."


async def toggle_item(name: str, enabled: bool, ctx: ToolContext, kind: str = "mcp") -> str:
    """Enable or disable an MCP server without removing it.

    Args:
        name: the server's name.
        enabled: true to enable, false to disable.
        kind: what to toggle; only "mcp" (servers) for now.
    """
    if kind != "mcp":
        raise ToolError(f"cannot toggle items of kind {kind!r}; only 'mcp'")
    try:
        status = await ctx.host.set_mcp_enabled(name, enabled)
    except ValueError as exc:
        raise ToolError(str(exc)) from None
    return f"MCP server {name}: {'enabled' if enabled else 'disabled'} ({status.state})."


async def list_items(ctx: ToolContext) -> list[dict[str, Any]]:
    """List the MCP servers with their origin, state, error and tool count."""
    return [
        {
            "name": s.name,
            "origin": s.origin,
            "enabled": s.enabled,
            "state": s.state,
            "error": s.error,
            "tools": s.tools,
            "target": s.target,
        }
        for s in ctx.host.queries.mcp_servers()
    ]


class AdminToolSource:
    """Offers the ``config`` group to admins only."""

    def __init__(self) -> None:
        self._tools = [
            tool_from_function(register_mcp, group=GROUP, admin_only=True, destructive=True),
            tool_from_function(delete_mcp, group=GROUP, admin_only=True, destructive=True),
            tool_from_function(toggle_item, group=GROUP, admin_only=True, destructive=True),
            tool_from_function(list_items, group=GROUP, admin_only=True),
        ]

    def groups(self) -> list[Group]:
        return [
            Group(
                GROUP,
                "Admin: add, remove, enable and list MCP servers",
                len(self._tools),
                "ready",
                admin_only=True,
            )
        ]

    def tools(self, group: str) -> list[Tool]:
        return list(self._tools) if group == GROUP else []
