"""An MCP server's resources as two tools of its group: ``list_resources``, ``read_resource``.

A server that declares the ``resources`` capability gets, beside its own tools,
``mcp__<server>__list_resources`` (its resources and resource templates) and
``mcp__<server>__read_resource`` (one resource by URI), named like its tools and visible
once the session activates the server. Should the server have tools of those names, its
own keep them and ours end in a short hash (see :mod:`bothost.agent.mcp_tools`).
Both read what a third party wrote, so both are ``untrusted`` (the turn wraps their
results); a resource's contents may be the user's files or mail, so ``read_resource`` is
``private`` too, like an MCP tool that declares nothing. Neither has side effects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bothost.agent.tools import Capabilities, Tool, ToolContext, ToolError, ToolResult
from bothost.mcp.content import CallResult
from bothost.mcp.roster import plugin_name

LIST = "list_resources"
READ = "read_resource"
URI_SCHEMA = {
    "type": "object",
    "properties": {
        "uri": {
            "type": "string",
            "description": "The resource's URI, from list_resources (a template filled in)",
        }
    },
    "required": ["uri"],
}
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def resource_tools(manager: Any, server: str, name: Callable[[str], str]) -> list[Tool]:
    """The two resource tools of `server`; `name` gives each its model-facing name."""

    async def listing(arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return as_tool_result(await manager.list_resources(server), server)

    async def read(arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return as_tool_result(await manager.read_resource(server, arguments["uri"]), server)

    common: dict[str, Any] = {"own_deadline": True, "group": server, "plugin": plugin_name(server)}
    read_name = name(READ)
    return [
        Tool(
            name=name(LIST),
            description=(
                f"List the resources (documents, files, records) the MCP server {server} "
                f"offers, and its resource templates; read one with {read_name}."
            ),
            schema=EMPTY_SCHEMA,
            run=listing,
            capabilities=Capabilities(untrusted=True),
            **common,
        ),
        Tool(
            name=read_name,
            description=(
                f"Read one resource of the MCP server {server} by its URI. Text comes back "
                "as text; images and other binary contents as a /media/ link."
            ),
            schema=URI_SCHEMA,
            run=read,
            capabilities=Capabilities(private=True, untrusted=True),
            **common,
        ),
    ]


def as_tool_result(result: CallResult, server: str) -> ToolResult:
    if result.is_error and not result.text:
        raise ToolError(f"{server}: resources failed")
    links = [f"/media/{p.name}" for p in result.media]
    return ToolResult(result.text, is_error=result.is_error, media=links)
