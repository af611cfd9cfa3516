"""What the plain stdio test servers share: one JSON-RPC message a line, in and out.

A server here is a script run as its own process (``python tests/mcp/servers/X.py``), so its
folder is first on ``sys.path`` and ``from lines import serve, write`` finds this module.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable


def write(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def serve(result: Callable[[str, dict], dict], invalid: tuple[type[Exception], ...] = ()) -> None:
    """Answer each request on stdin with ``result(method, params)``, until stdin ends.

    ``NotImplementedError`` from it is "Method not found" (-32601); an exception of a type in
    ``invalid`` is "Invalid params" (-32602) with its text. Notifications and answers are
    read and left unanswered."""
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        try:
            answer = {"result": result(message["method"], message.get("params") or {})}
        except invalid as exc:
            answer = {"error": {"code": -32602, "message": str(exc)}}
        except NotImplementedError as exc:
            answer = {"error": {"code": -32601, "message": f"Method not found: {exc}"}}
        write({"jsonrpc": "2.0", "id": message["id"], **answer})
