"""A stdio server that fails its start in one of the ways the host must name.

``STALL=hang-initialize`` or ``STALL=hang-tools/list``: that request is never answered (the
server sleeps until it is stopped). ``STALL=exit``: it closes its stdin before it answers
``initialize`` and its stdout after, then says why on stderr and exits with status 3 a
moment later, so the host's next write finds the pipe closed before it can see the exit:
the order a loaded machine showed for a server that exits at once (issue 34).
"""

from __future__ import annotations

import json
import os
import sys
import time

from lines import serve, write

STALL = os.environ.get("STALL", "")
WHY = "fatal: the licence server said no"


def result(method: str, params: dict) -> dict:
    if STALL == f"hang-{method}":  # (the env's values are secrets: masked in what is shown)
        time.sleep(3600)  # stopped by the host's SIGTERM
    if method == "initialize":
        return {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "stalling", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": [{"name": "noop", "inputSchema": {"type": "object"}}]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "done"}]}
    raise NotImplementedError(method)


def exit_after_closing() -> None:
    message = json.loads(sys.stdin.readline())
    while message.get("method") != "initialize":  # server/discover: an older server's answer
        write({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "?"}})
        message = json.loads(sys.stdin.readline())
    os.close(0)  # no reader left: the host's next write fails at once
    write(
        {"jsonrpc": "2.0", "id": message["id"], "result": result("initialize", message["params"])}
    )
    os.close(1)
    time.sleep(0.3)  # the pipes are seen closed first; the exit comes after
    sys.stderr.write(WHY + "\n")
    sys.stderr.flush()
    os._exit(3)  # not sys.exit: flushing the closed stdout would add its own stderr line


if __name__ == "__main__":
    if STALL == "exit":
        exit_after_closing()
    else:
        serve(result)
