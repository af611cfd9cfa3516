"""A tiny stdio MCP server that is careless with its secrets, for the canary tests.

It takes any arguments (``--token VALUE`` and the like) and prints them, and the values of
every ``CANARY_*`` variable in its environment, to stderr — as a badly written server
would. bothost captures that stderr into the server's log, so the log must redact them.
Its tool ``whoami`` also logs them through ``notifications/message``; ``dump`` returns them
and pushes an ``event/dump`` whose summary carries them.
"""

from __future__ import annotations

import os
import sys

from bothost.mcp_servers.kit import Server

server = Server("canary", version="1.0.0", instructions="Leaks its secrets to stderr.")
PURE = {"private": False, "untrusted": False, "egress": "none", "destructive": False}


def secrets() -> str:
    env = {k: v for k, v in os.environ.items() if k.startswith("CANARY_")}
    return f"args={sys.argv[1:]} env={env}"


@server.tool(annotations={"readOnlyHint": True, "openWorldHint": False}, capabilities=PURE)
async def whoami() -> str:
    """Say hello (and log the server's secrets, carelessly)."""
    await server.log("info", "whoami called with " + secrets())
    return "canary server here"


@server.tool(annotations={"readOnlyHint": True, "openWorldHint": False}, capabilities=PURE)
async def dump() -> str:
    """Echo the server's secrets back, and push an event whose summary carries them."""
    await server.notify("event/dump", {"id": "dump", "summary": "dumped " + secrets()})
    return "dump: " + secrets()


def main() -> None:
    print("canary server starting with " + secrets(), file=sys.stderr, flush=True)
    server.run([])


if __name__ == "__main__":
    main()
