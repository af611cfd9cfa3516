"""``sampling/createMessage``: a server asks the host's model, on the client's side.

The protocol half only: whether sampling is on for the server (config
``mcp.servers.NAME.sampling``; off, the ``sampling`` capability is not declared and a
request is refused with -32601), the shape of a request checked before anyone is asked
(-32602 naming what is wrong), and the hand-over to the host's :data:`Sample` with the
conversation the request belongs to (the :class:`~bothost.mcp.elicitation.Asker` of the
tool call it arrived during, or None). Approval, budgets, the model call and what the
model reads are the host's: :mod:`bothost.agent.sampling`.

The same request may arrive two ways: as a server request on a stateful connection
(:mod:`bothost.mcp.inbound`), or inside a 2026-07-28 server's ``input_required`` answer
(:mod:`bothost.mcp.followup`); both come here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from bothost.mcp import jsonrpc
from bothost.mcp.elicitation import Asker
from bothost.mcp.jsonrpc import McpError

# (params, the Asker of the conversation or None) -> the CreateMessageResult
Sample = Callable[[dict[str, Any], Asker | None], Awaitable[dict[str, Any]]]
# What the client declares when sampling is on: tool use in sampling (2025-11-25) is
# honoured; `context` is not declared, so `includeContext` is read as "none".
CAPABILITY: dict[str, Any] = {"tools": {}}
ROLES = ("user", "assistant")
MAX_MESSAGES = 200  # messages in one request: a conversation, not a corpus


def problem(params: dict[str, Any]) -> str | None:
    """What makes `params` no ``CreateMessageRequest``, or None."""
    messages = params.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages must be a non-empty list"
    if len(messages) > MAX_MESSAGES:
        return f"more than {MAX_MESSAGES} messages"
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            return f"messages[{index}] needs a role of user or assistant"
        if not isinstance(message.get("content"), dict | list):
            return f"messages[{index}].content must be a content block or a list of them"
    tokens = params.get("maxTokens")
    if type(tokens) is not int or tokens < 1:
        return "maxTokens must be a positive integer"
    system = params.get("systemPrompt")
    if system is not None and not isinstance(system, str):
        return "systemPrompt must be a string"
    tools = params.get("tools")
    if tools is not None and not isinstance(tools, list):
        return "tools must be a list"
    return None


async def answer(
    params: dict[str, Any], sample: Sample | None, asker: Asker | None, server: str
) -> dict[str, Any]:
    """The ``CreateMessageResult`` for a server's request; raises McpError."""
    if sample is None:
        raise McpError(
            jsonrpc.METHOD_NOT_FOUND,
            f"sampling is off for MCP server {server} (mcp.servers.{server}.sampling)",
        )
    wrong = problem(params)
    if wrong is not None:
        raise McpError(jsonrpc.INVALID_PARAMS, f"sampling request refused: {wrong}")
    return await sample(params, asker)
