"""A raw JSON-RPC MCP server over stdio whose tool calls take long: the long-call tests' peer.

``ask`` puts an ``elicitation/create`` to the client and answers with what came back;
``ticking`` reports progress every ``interval`` seconds, ``count`` times (0: until
cancelled), then answers; ``quiet`` answers after ``seconds`` and reports nothing meanwhile.
Each call runs in its own thread, so the reader keeps taking answers and cancellations.
"""

from __future__ import annotations

import json
import sys
import threading

ANSWER_WAIT = 30.0  # how long ``ask`` waits for the client's answer (longer than any test)

out_lock = threading.Lock()
answers: dict[object, dict] = {}
answered = threading.Condition()
cancelled: dict[object, threading.Event] = {}


def write(message: dict) -> None:
    with out_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def text(value: str) -> dict:
    return {"content": [{"type": "text", "text": value}]}


def ask(id_: object) -> dict:
    question = {
        "message": "Password?",
        "requestedSchema": {"type": "object", "properties": {"password": {"type": "string"}}},
    }
    ask_id = f"ask-{id_}"
    write({"jsonrpc": "2.0", "id": ask_id, "method": "elicitation/create", "params": question})
    with answered:
        answered.wait_for(lambda: ask_id in answers, timeout=ANSWER_WAIT)
        return answers.pop(ask_id, {"error": "no answer"})


def call(id_: object, name: str, args: dict, token: object) -> dict:
    stop = cancelled.setdefault(id_, threading.Event())
    if name == "ask":
        return text(json.dumps(ask(id_).get("result")))
    if name == "ticking":
        count, interval = int(args.get("count", 0)), float(args.get("interval", 0.05))
        done = 0
        while not stop.wait(interval) and (count == 0 or done < count):
            done += 1
            progress = {"progressToken": token, "progress": done, "message": f"tick {done}"}
            if token is not None:
                write({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
        return text(f"ticked {done}")
    stop.wait(float(args.get("seconds", 30)))
    return text("quiet")


def handle_call(message: dict) -> None:
    params = message.get("params") or {}
    token = (params.get("_meta") or {}).get("progressToken")
    result = call(message["id"], params.get("name"), params.get("arguments") or {}, token)
    write({"jsonrpc": "2.0", "id": message["id"], "result": result})


def tool(name: str) -> dict:
    return {"name": name, "inputSchema": {"type": "object"}}


def handle(message: dict) -> None:
    method, id_ = message.get("method"), message.get("id")
    if method is None:  # the client's answer to our question
        with answered:
            answers[id_] = message
            answered.notify_all()
    elif method == "notifications/cancelled":
        cancelled.setdefault(message["params"]["requestId"], threading.Event()).set()
    elif id_ is None:
        return
    elif method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "long-call-server", "version": "1"},
        }
        write({"jsonrpc": "2.0", "id": id_, "result": result})
    elif method == "tools/list":
        tools = [tool("ask"), tool("ticking"), tool("quiet")]
        write({"jsonrpc": "2.0", "id": id_, "result": {"tools": tools}})
    elif method == "tools/call":
        threading.Thread(target=handle_call, args=(message,), daemon=True).start()
    else:
        error = {"code": -32601, "message": f"method not found: {method}"}
        write({"jsonrpc": "2.0", "id": id_, "error": error})


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            handle(json.loads(line))


if __name__ == "__main__":
    main()
