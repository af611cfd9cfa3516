"""A stdio MCP server (standard library only) with one tool, ``environment``, answering the
variables it was started with as structured content. Tests pack it into a wheel and launch it
through ``uvx``, to check what reaches a server started the way users start PyPI servers."""

from __future__ import annotations

import json
import os
import sys


def send(message: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


TOOL = {
    "name": "environment",
    "description": "The server's environment variables.",
    "inputSchema": {"type": "object", "properties": {}},
}


def answer(request: dict) -> dict:
    method = request.get("method")
    if method == "initialize":
        return {
            "result": {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "bothost-env-server", "version": "0.1.0"},
            }
        }
    if method == "tools/list":
        return {"result": {"tools": [TOOL]}}
    if method == "tools/call":
        env = dict(os.environ)
        return {
            "result": {
                "content": [{"type": "text", "text": json.dumps(env)}],
                "structuredContent": env,
            }
        }
    return {"error": {"code": -32601, "message": f"unknown method {method}"}}


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        if "id" in request:  # notifications need no answer
            send({"id": request["id"], **answer(request)})


if __name__ == "__main__":
    main()
