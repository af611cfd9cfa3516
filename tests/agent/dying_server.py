"""A test MCP server on the kit whose ``die`` tool kills the server in the middle of the call."""

import os

from bothost.mcp_servers.kit import Server

server = Server("dying", version="1.0.0", instructions="Dies when asked, for tests.")
NONE = {"private": False, "untrusted": False, "egress": "none", "destructive": False}


@server.tool(capabilities=NONE, annotations={"readOnlyHint": True, "openWorldHint": False})
async def die() -> str:
    """Exit the process before answering."""
    os._exit(3)


@server.tool(capabilities=NONE, annotations={"readOnlyHint": True, "openWorldHint": False})
async def echo(text: str) -> str:
    """Return the text."""
    return text


if __name__ == "__main__":
    server.run()
