"""An official SDK 2.x server with a prompt whose arguments it completes (MCP completions).

Prompt ``forecast(city, days)``: ``city`` completes from a fixed list by prefix (one name
with a space, one with a hidden character that the client must drop), and ``days``
completes to the city typed before it (from the request's ``context``), so a test sees the
context arrive.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import Completion, PromptReference

server = MCPServer("completing")
CITIES = ["Zurich", "Zug", "Zermatt", "Zug\u202eevil", "Zurich West"]


@server.prompt()
def forecast(city: str, days: str = "3") -> str:
    """The weather in a city."""
    return f"What is the weather in {city} for {days} days?"


@server.completion()
async def complete(ref, argument, context):
    if not isinstance(ref, PromptReference) or ref.name != "forecast":
        return None
    if argument.name == "city":
        return Completion(values=[c for c in CITIES if c.startswith(argument.value)])
    given = (context.arguments or {}) if context is not None else {}
    return Completion(values=[f"{given.get('city', 'nowhere')}-7"])


if __name__ == "__main__":
    server.run()
