"""A 2026-07-28-only server on the official Python SDK 2.x, over stdio: it answers
``server/discover`` and enveloped requests, and refuses ``initialize`` with -32022 naming
2026-07-28, as a server that dropped the handshake does.

The SDK serves both eras on one stdio connection (the first request picks one); this serves
only its 2026-07-28 loop. Tools: ``greet`` (its ``name`` marked to be sent as the
``Mcp-Param-Name`` header over HTTP) and ``revision`` (the revision the request came at and
the client capabilities it carried, as JSON).
"""

from __future__ import annotations

import json
from typing import Annotated

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.runner import _serve_modern_stream  # the SDK's 2026-07-28 loop, alone
from mcp.server.stdio import stdio_server
from pydantic import Field

server = MCPServer("discover-only", instructions="Greets people.")


@server.tool()
def greet(name: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Name"})]) -> str:
    """Greet someone by name."""
    return f"Hello, {name}, from 2026!"


@server.tool()
def revision(ctx: Context) -> str:
    """What this request came with."""
    caps = ctx.client_capabilities
    declared = caps.model_dump(by_alias=True, exclude_none=True) if caps is not None else None
    return json.dumps({"protocol": ctx.protocol_version, "capabilities": declared})


async def main() -> None:
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read, write), lowlevel.lifespan(lowlevel) as state:
        await _serve_modern_stream(
            lowlevel, read, write, lifespan_state=state, raise_exceptions=False
        )


if __name__ == "__main__":
    anyio.run(main)
