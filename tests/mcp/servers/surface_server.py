"""A raw stdio MCP server with resources and prompts, for the client's tests.

Resources (listed over two pages): a text note, a tiny PNG as a blob, a text over the
client's size bound, and a resource whose URI it cannot read; one resource template.
Prompts: ``greet`` (arguments ``name``, required, and ``style``) renders a user message, an
assistant message and an embedded resource; ``plain`` takes no arguments. ``CAPABILITIES``
(comma-separated, default ``tools,resources,prompts``) says what it declares. The tool
``add`` adds a resource and a prompt and sends both ``list_changed`` notifications.
``WIDE_ARGS=N`` adds a prompt ``wide`` with N required arguments and a long description,
and ``MANY_PROMPTS=N`` N more prompts with long names, as a hostile server would list them.
``NO_PROMPTS=1`` lists none while still declaring ``prompts`` (as mcp-server-time did).
"""

from __future__ import annotations

import base64
import os

from lines import serve, write

TINY_PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()
BIG = int(os.environ.get("BIG_CHARS", "3000000"))
DECLARED = os.environ.get("CAPABILITIES", "tools,resources,prompts").split(",")

RESOURCES = [
    {"uri": "note://today", "name": "today", "title": "Today's note", "mimeType": "text/plain"},
    {"uri": "img://pixel", "name": "pixel", "mimeType": "image/png", "size": 70},
    {"uri": "note://big", "name": "big", "description": "a very long text"},
    {"uri": "note://gone", "name": "gone"},
]
TEMPLATES = [
    {"uriTemplate": "note://{day}", "name": "note of a day", "description": "any day's note"}
]
PROMPTS = [
    {
        "name": "greet",
        "description": "Greet someone",
        "arguments": [
            {"name": "name", "description": "who", "required": True},
            {"name": "style", "description": "plain or loud"},
        ],
    },
    {"name": "plain", "description": "No arguments"},
]
if wide := int(os.environ.get("WIDE_ARGS", "0")):
    PROMPTS.append(
        {
            "name": "wide",
            "description": "w" * 100_000,
            "arguments": [{"name": f"a{i}", "required": True} for i in range(wide)],
        }
    )
for n in range(int(os.environ.get("MANY_PROMPTS", "0"))):
    PROMPTS.append({"name": f"p{n}-" + "n" * 5000, "description": "d" * 5000})
if os.environ.get("NO_PROMPTS"):
    PROMPTS.clear()


def contents(uri: str) -> list[dict] | None:
    if uri == "note://today":
        return [{"uri": uri, "mimeType": "text/plain", "text": "Buy milk.\nCall Ana."}]
    if uri == "img://pixel":
        return [{"uri": uri, "mimeType": "image/png", "blob": TINY_PNG}]
    if uri == "note://big":
        return [{"uri": uri, "text": "x" * BIG}]
    return None


def prompt(name: str, arguments: dict) -> dict | None:
    if name == "plain":
        return {"messages": [{"role": "user", "content": {"type": "text", "text": "Hello."}}]}
    if name != "greet":
        return None
    text = f"Say hello to {arguments.get('name')}, {arguments.get('style', 'plain')}ly."
    note = {"uri": "note://today", "mimeType": "text/plain", "text": "Buy milk."}
    return {
        "description": "A greeting",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": text}},
            {"role": "assistant", "content": {"type": "text", "text": "Which greeting?"}},
            {"role": "user", "content": {"type": "resource", "resource": note}},
        ],
    }


def result(method: str, params: dict) -> dict:
    if method == "initialize":
        return {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {name: {} for name in DECLARED if name},
            "serverInfo": {"name": "surface-server", "version": "1"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": [{"name": "noop", "inputSchema": {"type": "object"}}]}
    if method == "tools/call" and params.get("name") == "add":
        # a new resource and prompt, announced the way the spec says
        RESOURCES.append({"uri": "note://new", "name": "new"})
        PROMPTS.append({"name": "fresh", "description": "Added later"})
        for what in ("resources", "prompts"):
            write({"jsonrpc": "2.0", "method": f"notifications/{what}/list_changed"})
        return {"content": [{"type": "text", "text": "added"}]}
    if method == "resources/list":
        start = int(params.get("cursor") or 0)
        page = {"resources": RESOURCES[start : start + 2]}
        if start + 2 < len(RESOURCES):
            page["nextCursor"] = str(start + 2)
        return page
    if method == "resources/templates/list":
        return {"resourceTemplates": TEMPLATES}
    if method == "resources/read":
        found = contents(params.get("uri", ""))
        if found is None:
            raise LookupError(f"Resource not found: {params.get('uri')}")
        return {"contents": found}
    if method == "prompts/list":
        return {"prompts": PROMPTS}
    if method == "prompts/get":
        found = prompt(params.get("name", ""), params.get("arguments") or {})
        if found is None:
            raise LookupError(f"Unknown prompt: {params.get('name')}")
        return found
    raise NotImplementedError(method)


if __name__ == "__main__":
    serve(result, invalid=(LookupError,))
