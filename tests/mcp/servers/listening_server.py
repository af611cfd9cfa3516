"""A server on the official Python SDK 2.x (stdio, both eras: the first request picks one)
whose changes reach a 2026-07-28 client only on ``subscriptions/listen``: two notes as
resources, a tool that changes one (``notifications/resources/updated``), a tool that adds
a tool (``notifications/tools/list_changed``), and one that logs (``notifications/message``,
sent at 2026-07-28 only when the request's ``_meta`` names a ``logLevel``).
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("listening")
NOTES = {"note://a": "first", "note://b": "second"}


@server.resource("note://a", name="Note A", mime_type="text/plain")
def note_a() -> str:
    return NOTES["note://a"]


@server.resource("note://b", name="Note B", mime_type="text/plain")
def note_b() -> str:
    return NOTES["note://b"]


@server.tool()
async def change(uri: str, text: str, ctx: Context) -> str:
    """Change a note; its subscribers hear of it."""
    NOTES[uri] = text
    await ctx.notify_resource_updated(uri)
    return "changed"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `grown`; listeners hear the list changed."""

    def grown() -> str:
        """A tool that was not there at first."""
        return "grown"

    server.add_tool(grown)
    await ctx.notify_tools_changed()
    return "grew"


@server.tool()
async def chatter(ctx: Context) -> str:
    """Log one line at info and one at debug."""
    await ctx.info("info line from the server")
    await ctx.debug("debug line from the server")
    return "said"


if __name__ == "__main__":
    server.run()
