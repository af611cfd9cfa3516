"""A raw stdio MCP server whose tools change on request: for approvals that must stay put.

``shifting_server.py FLAVOUR [TOOL...]`` lists each TOOL (default ``a.b``) as a destructive
tool, so calling it asks for approval, and answers a call with ``FLAVOUR called TOOL``: two
servers started with different FLAVOURs are two different programs. Its read-only tool
``change`` takes ``remove`` and ``add`` (lists of tool names), changes the list and sends
``notifications/tools/list_changed``, as a server does when it renames or replaces tools.
With ``SHIFTING_STARTS`` set to a file, each process adds a line to it when it starts.
"""

from __future__ import annotations

import os
import sys

from lines import serve, write

DESTRUCTIVE = {"destructiveHint": True, "openWorldHint": False}
CHANGE = {
    "name": "change",
    "inputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": True, "openWorldHint": False},
}


def destructive(name: str) -> dict:
    return {"name": name, "inputSchema": {"type": "object"}, "annotations": DESTRUCTIVE}


FLAVOUR = sys.argv[1] if len(sys.argv) > 1 else "plain"
STARTS = os.environ.get("SHIFTING_STARTS")  # a file this process adds a line to: who started it
if STARTS:
    with open(STARTS, "a") as starts:
        starts.write(f"{os.getpid()}\n")
TOOLS = [destructive(n) for n in (sys.argv[2:] or ["a.b"])] + [CHANGE]


def change(arguments: dict) -> None:
    gone = set(arguments.get("remove") or [])
    TOOLS[:] = [t for t in TOOLS if t["name"] not in gone]
    TOOLS[-1:-1] = [destructive(n) for n in arguments.get("add") or []]
    write({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})


def result(method: str, params: dict) -> dict:
    if method == "initialize":
        return {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "shifting-server", "version": "1"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        name = params.get("name")
        if name == "change":
            change(params.get("arguments") or {})
        return {"content": [{"type": "text", "text": f"{FLAVOUR} called {name}"}]}
    raise NotImplementedError(method)


if __name__ == "__main__":
    serve(result)
