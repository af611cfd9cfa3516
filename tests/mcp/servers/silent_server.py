"""A 2025-11-25 stdio server that ignores every method it does not know: no answer at all,
not even -32601 — so a ``server/discover`` probe waits out its whole bound.

None of the third-party servers measured behaves so (docs/mcp.md, "The 2026-07-28 probe"),
but a hand-written server may; it must still start, a bit later, and work.
"""

from __future__ import annotations

import json
import sys

from lines import write

TOOL = {"name": "hello", "inputSchema": {"type": "object", "properties": {}}}


def answer(method: str, params: dict) -> dict | None:
    if method == "initialize":
        return {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "silent", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": [TOOL]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "hello from an old server"}]}
    if method == "ping":
        return {}
    return None  # anything else goes unanswered


for line in sys.stdin:
    message = json.loads(line)
    if "id" in message and "method" in message:
        result = answer(message["method"], message.get("params") or {})
        if result is not None:
            write({"jsonrpc": "2.0", "id": message["id"], "result": result})
