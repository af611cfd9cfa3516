"""A raw stdio MCP server whose tool list grows: for model-facing names that must not move.

It first lists ``a.b`` (destructive, so calling it asks for approval) and ``grow``; calling
``grow`` adds a destructive tool named ``a_b`` — what ``a.b`` becomes once sanitised — and
sends ``notifications/tools/list_changed``. Each tool answers ``called <its name>``.
"""

from __future__ import annotations

from lines import serve, write

DESTRUCTIVE = {"destructiveHint": True, "openWorldHint": False}
TOOLS = [
    {"name": "a.b", "inputSchema": {"type": "object"}, "annotations": DESTRUCTIVE},
    {
        "name": "grow",
        "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
]


def result(method: str, params: dict) -> dict:
    if method == "initialize":
        return {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "renaming-server", "version": "1"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        name = params.get("name")
        if name == "grow" and all(t["name"] != "a_b" for t in TOOLS):
            TOOLS.append(
                {"name": "a_b", "inputSchema": {"type": "object"}, "annotations": DESTRUCTIVE}
            )
            write({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return {"content": [{"type": "text", "text": f"called {name}"}]}
    raise NotImplementedError(method)


if __name__ == "__main__":
    serve(result)
