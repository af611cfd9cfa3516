"""An MCP server on the official Python SDK 2.x whose tools ask the client's model.

``summarize`` sends ``sampling/createMessage`` (a system prompt, the text to summarize,
``maxTokens`` 50,000, more than the host allows) and returns what the model wrote with the
model's name and the stop reason; ``lookup`` offers the model a tool (``define``) and, when
the model uses it, answers with a ``tool_result`` in a second request; ``open_link`` sends a
URL-mode elicitation and returns the action, then says the elicitation is complete.

It serves only the SDK's 2025-11-25 loop: 2026-07-28 deprecates sampling (SEP-2577), and
the SDK's stateless loop has no back-channel for it.
"""

from __future__ import annotations

import json
import warnings

import anyio
from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.runner import _serve_legacy_stream  # the SDK's 2025 handshake loop, alone
from mcp.server.stdio import stdio_server

warnings.simplefilter("ignore")  # sampling is deprecated as of 2026-07-28 (SEP-2577)

server = MCPServer("sampler", instructions="Asks the client's model.")


def reply(result: types.CreateMessageResult | types.CreateMessageResultWithTools) -> str:
    content = result.content if isinstance(result.content, list) else [result.content]
    return json.dumps(
        {
            "model": result.model,
            "stop": result.stop_reason,
            "content": [c.model_dump(by_alias=True, exclude_none=True) for c in content],
        }
    )


@server.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Summarize text with the client's model."""
    result = await ctx.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))],
        max_tokens=50_000,
        system_prompt="You summarize in one line.",
        include_context="allServers",
    )
    return reply(result)


@server.tool()
async def lookup(word: str, ctx: Context) -> str:
    """Define a word, letting the model use a dictionary tool."""
    define = types.Tool(
        name="define",
        description="The dictionary entry of a word.",
        input_schema={"type": "object", "properties": {"word": {"type": "string"}}},
    )
    messages = [
        types.SamplingMessage(role="user", content=types.TextContent(type="text", text=word))
    ]
    first = await ctx.session.create_message(messages, max_tokens=100, tools=[define])
    given = first.content if isinstance(first.content, list) else [first.content]
    uses = [c for c in given if c.type == "tool_use"]
    if not uses:
        return reply(first)
    messages.append(types.SamplingMessage(role="assistant", content=given))
    messages.append(
        types.SamplingMessage(
            role="user",
            content=[
                types.ToolResultContent(
                    type="tool_result",
                    tool_use_id=uses[0].id,
                    content=[types.TextContent(type="text", text=f"{word}: a small word")],
                )
            ],
        )
    )
    second = await ctx.session.create_message(messages, max_tokens=100, tools=[define])
    return reply(second)


@server.tool()
async def open_link(ctx: Context) -> str:
    """Send the person to a link (URL-mode elicitation)."""
    result = await ctx.session.elicit_url(
        "Sign in to the tracker", "https://tracker.example.com/login?s=1", "el-1"
    )
    await ctx.session.send_elicit_complete("el-1")
    return result.action


async def main() -> None:
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read, write), lowlevel.lifespan(lowlevel) as state:
        await _serve_legacy_stream(
            lowlevel,
            read,
            write,
            lifespan_state=state,
            session_id=None,
            init_options=lowlevel.create_initialization_options(),
            raise_exceptions=False,
        )


if __name__ == "__main__":
    anyio.run(main)
