"""A raw JSON-RPC MCP server over stdio for the client's tests: it misbehaves on request.

No SDK underneath, so every byte is under the test's control. It pages ``tools/list``
(``TOOL_COUNT`` tools, ``PAGE_SIZE`` per page), pushes ``event/*`` notifications, writes
garbage and over-long lines, asks the client things (elicitation, roots, an unknown
method, with string and numeric ids), reports progress, and can die in the middle of a call.
Each tools/call runs in its own thread so the reader keeps seeing ``notifications/cancelled``.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import threading
import time

PAGE_SIZE = int(os.environ.get("PAGE_SIZE", "4"))
TOOL_COUNT = int(os.environ.get("TOOL_COUNT", "10"))
PROTOCOL = os.environ.get("PROTOCOL")  # answer initialize with this revision
PUSH_ON_START = int(os.environ.get("PUSH_ON_START", "0"))
STRUCTURED = os.environ.get("STRUCTURED", "")
# the list changes while the client pages through it, this many times: list_changed, and
# the cursor it holds is refused (-32602, as the spec has invalid cursors answered)
CHANGE_WHILE_PAGING = [int(os.environ.get("CHANGE_WHILE_PAGING", "0"))]
# a broken pager: "loop" sends the first page's cursor back on the last page; "endless"
# sends a fresh cursor for ever, past the last page (its pages then empty)
CURSORS = os.environ.get("CURSORS", "")
STRUCTURED_SCHEMA = {
    "type": "object",
    "properties": {"temperature": {"type": "number"}, "unit": {"type": "string"}},
    "required": ["temperature", "unit"],
}
TINY_PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()

out_lock = threading.Lock()
answers: dict[object, dict] = {}
answered = threading.Condition()
counter = iter(range(1, 1_000_000))

FIXED_TOOLS = [
    "echo",
    "push",
    "garbage",
    "die",
    "slow",
    "long_line",
    "progress",
    "elicit",
    "structured",
    "image",
    "log",
    "ask_roots",
    "ask_unknown",
    "env",
    "flood_stderr",
    "helper_pid",
]
helper = None


def write(message: dict | bytes) -> None:
    data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
    with out_lock:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def notify(method: str, params: dict) -> None:
    write({"jsonrpc": "2.0", "method": method, "params": params})


def ask(method: str, params: dict, id_: object) -> dict:
    write({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
    with answered:
        answered.wait_for(lambda: id_ in answers, timeout=10)
        return answers.pop(id_, {"error": "no answer"})


def tool_list() -> list[dict]:
    tools = [
        {
            "name": n,
            "description": f"test tool {n}",
            "inputSchema": {"type": "object", "properties": {}},
        }
        for n in FIXED_TOOLS
    ]
    tools[0]["annotations"] = {"readOnlyHint": True}
    for tool in tools:
        if tool["name"] == "structured":
            tool["outputSchema"] = STRUCTURED_SCHEMA
    tools[0]["_meta"] = {"bothost/capabilities": {"private": True}}
    tools += [
        {"name": f"extra_{i}", "inputSchema": {"type": "object"}}
        for i in range(max(0, TOOL_COUNT - len(FIXED_TOOLS)))
    ]
    return tools


def text(value: str, **extra) -> dict:
    return {"content": [{"type": "text", "text": value}], **extra}


def call(name: str, args: dict, meta: dict) -> dict | None:
    if name == "echo":
        if "for_user" in args:  # beside the text, a block for the user's eyes only
            table = {
                "type": "text",
                "text": args["for_user"],
                "annotations": {"audience": ["user"]},
            }
            return {"content": [{"type": "text", "text": str(args.get("text", ""))}, table]}
        return text(str(args.get("text", "")))
    if name == "push":
        # "unstorable": the numbers of events whose payload holds a lone surrogate (valid JSON,
        # but no store can encode it); then all are written at once, so the client reads one
        # backlog (else one write each, as a watcher sends them)
        unstorable = set(args.get("unstorable", []))
        method, lines = args.get("type", "event/test"), []
        for i in range(int(args.get("count", 1))):
            params = {"id": f"e{i}", "summary": f"event {i}"}
            if i in unstorable:
                params["body"] = "\ud800"
            if not unstorable:
                notify(method, params)
                continue
            lines.append(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}))
        if lines:
            write(("\n".join(lines) + "\n").encode())
        return text("pushed")
    if name == "garbage":
        write(b"this is not json\n")
        write(b'{"jsonrpc": "1.0", "id": 1}\n')
        write(b"[1, 2\n")
        return text("after garbage")
    if name == "die":
        sys.stderr.write("dying on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    if name == "slow":
        time.sleep(float(args.get("seconds", 30)))
        return text("slept")
    if name == "long_line":
        return text("x" * int(args.get("size", 2_000_000)))
    if name == "progress":
        token = meta.get("progressToken")
        for i in range(1, 4):
            notify(
                "notifications/progress",
                {"progressToken": token, "progress": i, "total": 3, "message": f"step {i}"},
            )
        return text("done")
    if name == "elicit":
        reply = ask(
            "elicitation/create",
            {
                "message": "Your name?",
                "requestedSchema": args.get("schema")
                or {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "color": {"type": "string", "default": "blue"},
                    },
                },
            },
            "elicit-1",
        )
        return text(json.dumps(reply.get("result", reply)))
    if name == "structured":  # STRUCTURED=wrong or missing breaks its outputSchema
        value = {"temperature": "warm" if STRUCTURED == "wrong" else 21.5, "unit": "C"}
        sent = {"content": [{"type": "text", "text": json.dumps(value)}]}
        return sent if STRUCTURED == "missing" else {**sent, "structuredContent": value}
    if name == "image":
        return {
            "content": [
                {"type": "text", "text": "a pixel"},
                {"type": "image", "data": TINY_PNG, "mimeType": "image/png"},
            ]
        }
    if name == "log":
        notify(
            "notifications/message",
            {"level": "warning", "logger": "test", "data": "logged through MCP"},
        )
        return text("logged")
    if name == "ask_roots":
        return text(json.dumps(ask("roots/list", {}, next(counter))))
    if name == "ask_unknown":
        return text(json.dumps(ask("sampling/createMessage", {}, "str-id-7")))
    if name == "env":
        return {"content": [], "structuredContent": dict(os.environ)}
    if name == "flood_stderr":
        for i in range(int(args.get("lines", 10))):
            sys.stderr.write(f"stderr line {i}\n")
        sys.stderr.flush()
        return text("flooded")
    if name == "helper_pid":
        return text(str(helper.pid if helper else 0))
    if name.startswith("extra_"):
        return text(name)
    return None


MISANSWERS = {  # how the `misanswer` tool answers, by its `how` argument
    "wrong_id": lambda id_: {"jsonrpc": "2.0", "id": f"x{id_}", "result": text("wrong id")},
    "no_id": lambda id_: {"jsonrpc": "2.0", "result": text("no id")},
    "null_id": lambda id_: {"jsonrpc": "2.0", "id": None, "result": text("null id")},
    "both": lambda id_: {
        "jsonrpc": "2.0",
        "id": id_,
        "result": text("a result"),
        "error": {"code": -32000, "message": "and an error"},
    },
}


def handle_call(message: dict) -> None:
    params = message.get("params") or {}
    if params.get("name") == "misanswer":
        write(MISANSWERS[params["arguments"]["how"]](message["id"]))
        return
    value = call(params.get("name"), params.get("arguments") or {}, params.get("_meta") or {})
    if value is None:
        write(
            {
                "jsonrpc": "2.0",
                "id": message["id"],
                # worded as the TypeScript SDK words an McpError: the code in the message
                "error": {
                    "code": -32602,
                    "message": f"MCP error -32602: unknown tool {params.get('name')}",
                },
            }
        )
    elif (params.get("arguments") or {}).get("result_first"):
        # TypeScript servers write "result" before "jsonrpc" and "id"
        write({"result": value, "jsonrpc": "2.0", "id": message["id"]})
    else:
        write({"jsonrpc": "2.0", "id": message["id"], "result": value})


def handle(message: dict) -> None:
    method, id_ = message.get("method"), message.get("id")
    if method is None:  # an answer to one of our requests
        with answered:
            answers[id_] = message
            answered.notify_all()
        return
    if method == "notifications/cancelled":
        sys.stderr.write(f"cancelled {message['params']['requestId']}\n")
        sys.stderr.flush()
        return
    if method == "notifications/initialized":
        for i in range(PUSH_ON_START):
            notify("event/hello", {"id": f"start-{i}", "summary": "hello from the test server"})
        return
    if id_ is None:
        return
    if method == "initialize":
        version = PROTOCOL or message["params"]["protocolVersion"]
        write(
            {
                "jsonrpc": "2.0",
                "id": id_,
                "result": {
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": True}},
                    "serverInfo": {"name": "paging-server", "version": "1"},
                },
            }
        )
    elif method == "ping":
        write({"jsonrpc": "2.0", "id": id_, "result": {}})
    elif method == "tools/list":
        start = int((message.get("params") or {}).get("cursor") or 0)
        if start and CHANGE_WHILE_PAGING[0]:
            CHANGE_WHILE_PAGING[0] -= 1
            notify("notifications/tools/list_changed", {})
            error = {"code": -32602, "message": "invalid cursor: the tool list changed"}
            write({"jsonrpc": "2.0", "id": id_, "error": error})
            return
        tools = tool_list()
        page = {"tools": tools[start : start + PAGE_SIZE]}
        if start + PAGE_SIZE < len(tools) or CURSORS == "endless":
            page["nextCursor"] = str(start + PAGE_SIZE)
        elif CURSORS == "loop":
            page["nextCursor"] = str(PAGE_SIZE)
        write({"jsonrpc": "2.0", "id": id_, "result": page})
    elif method == "tools/call":
        threading.Thread(target=handle_call, args=(message,), daemon=True).start()
    else:
        write(
            {
                "jsonrpc": "2.0",
                "id": id_,
                "error": {"code": -32601, "message": f"method not found: {method}"},
            }
        )


def main() -> None:
    global helper
    if os.environ.get("IGNORE_TERM"):
        import signal

        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.environ.get("SPAWN_HELPER"):
        import subprocess

        helper = subprocess.Popen(["sleep", "300"])
    for line in sys.stdin.buffer:
        if line.strip():
            handle(json.loads(line))


if __name__ == "__main__":
    main()
