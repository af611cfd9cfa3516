"""A hostile raw MCP server over stdio, for the fault-injection suite (test-only).

No SDK: every byte is under the test's control. ``hostile_server.py MODE`` picks how it
misbehaves once the host has initialized it and listed its tools (so the host sees it
``ready`` first, then suffers):

* ``polite`` — behaves; its ``echo`` tool answers (the well-behaved neighbour).
* ``garbage`` — an endless mix of non-JSON lines, JSON of the wrong shapes, bad ids,
  non-string methods, deeply nested arrays and invalid UTF-8, between normal answers.
* ``garbage-lines`` — the same without its 200 KB line: many short lines, each one a
  warning the host could write.
* ``huge`` — a line far above the client's cap (``HUGE_MB``, default 100 MB) streamed
  without a newline, then more of them, forever.
* ``flood-tools``, ``flood-resources``, ``flood-prompts`` — ``notifications/*/list_changed``
  as fast as the pipe takes them; ``flood-message`` (``notifications/message``),
  ``flood-event`` (``event/flood``), ``flood-bad-event`` (types no store may take: a
  lone surrogate, 100,006 characters; see :func:`bad_event_type`), ``flood-cancelled``,
  ``flood-progress`` (for unknown tokens, and for the token of a ``progress_flood`` call
  once one is made).
* ``flood-ping``, ``flood-roots``, ``flood-elicit`` — server *requests*, while the server
  stops reading its stdin, so the host's answers back up in the pipe.
* ``names`` — odd tool names: not strings, empty, colliding once sanitised, 200 characters,
  unicode; each tool answers with its own name.
* ``paging`` — ``tools/list`` pages forever with a new ``nextCursor`` each time;
  ``many-tools`` lists ``TOOL_COUNT`` (default 50,000) tools with big schemas, 500 a page.
* ``stuck`` — reads ``initialize`` and never answers.
* ``stderr`` — endless stderr, forever.

``HOSTILE_MARK`` names a file created once the misbehaviour has begun, so a test can wait
for it instead of sleeping. ``HOSTILE_COUNT`` names a file that always holds how many bytes
the server has written so far (stdout and stderr): the host has read all of them but what
one pipe holds, so a test can let a flood run until the host has taken a given amount.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "polite"
MARK = os.environ.get("HOSTILE_MARK")
COUNT = os.environ.get("HOSTILE_COUNT")
HUGE_MB = int(os.environ.get("HUGE_MB", "100"))
TOOL_COUNT = int(os.environ.get("TOOL_COUNT", "50000"))
PAGE_SIZE = 500
BATCH = 64 * 1024  # bytes written per flood write: fast, but a whole number of lines

out_lock = threading.Lock()
begun = threading.Event()
progress_token: list[object] = []


written = [0]  # bytes written so far, kept in the HOSTILE_COUNT file
count_lock = threading.Lock()  # stdout and stderr are written from different threads
count_fd = os.open(COUNT, os.O_WRONLY | os.O_CREAT, 0o600) if COUNT else None


def counted(size: int) -> None:
    """Add ``size`` written bytes to the count (one fixed-width write: never half a number)."""
    with count_lock:
        written[0] += size
        if count_fd is not None:
            os.pwrite(count_fd, b"%20d" % written[0], 0)


def write(data: bytes) -> None:
    with out_lock:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        counted(len(data))


def send(message: dict) -> None:
    write(json.dumps(message).encode() + b"\n")


def mark() -> None:
    if MARK and not begun.is_set():
        with open(MARK, "w") as f:
            f.write(MODE)
    begun.set()


def line(method: str, params: dict | None = None, id_: object = None) -> bytes:
    message: dict = {"jsonrpc": "2.0", "method": method}
    if id_ is not None:
        message["id"] = id_
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


def flood(make) -> None:
    """Write lines from ``make(i)`` forever, in batches as big as the pipe takes."""
    i = 0
    while True:
        chunk = bytearray()
        while len(chunk) < BATCH:
            chunk += make(i)
            i += 1
        write(bytes(chunk))
        mark()


GARBAGE = [
    b"this is not json\n",
    b"[1, 2\n",
    b"42\n",
    b'"a string"\n',
    b"[]\n",
    b'{"jsonrpc": "1.0", "id": 1, "result": {}}\n',
    b'{"jsonrpc": "2.0"}\n',
    b'{"jsonrpc": "2.0", "method": 5}\n',
    b'{"jsonrpc": "2.0", "method": null, "params": 3}\n',
    b'{"jsonrpc": "2.0", "method": "event/x", "params": "not an object"}\n',
    b'{"jsonrpc": "2.0", "method": "notifications/progress", "params": [1, 2]}\n',
    b'{"jsonrpc": "2.0", "id": true, "result": {}}\n',
    b'{"jsonrpc": "2.0", "id": {"a": 1}, "result": {}}\n',
    b'{"jsonrpc": "2.0", "id": 999999, "result": {}}\n',
    b'{"jsonrpc": "2.0", "id": 999998, "error": {"code": "abc", "message": 7}}\n',
    b'{"jsonrpc": "2.0", "id": 999997, "error": "flat"}\n',
    b"\xff\xfe\xfd not utf-8\n",
    b"[" * 100_000 + b"]" * 100_000 + b"\n",
    b'{"jsonrpc": "2.0", "id": "q", "method": ["ping"]}\n',
    b'{"jsonrpc": "2.0", "id": "r", "method": "ping", "params": 1}\n',
]


# garbage without its one 200 KB line: tens of thousands of lines a few MB
SHORT_GARBAGE = [g for g in GARBAGE if len(g) < 1000]


def bad_event_type(i: int) -> str:
    """``flood-bad-event``'s types: mostly a lone surrogate (no store can take it), every
    500th a 100,006-character type, the one after it a good one (the neighbour to keep)."""
    if i % 500 == 0:
        return "event/" + "x" * 100_000
    return "event/ok" if i % 500 == 1 else "event/\ud800"


FLOODS = {
    "flood-tools": lambda i: line("notifications/tools/list_changed"),
    "flood-resources": lambda i: line("notifications/resources/list_changed"),
    "flood-prompts": lambda i: line("notifications/prompts/list_changed"),
    "flood-message": lambda i: line(
        "notifications/message", {"level": "info", "data": f"flood {i}"}
    ),
    "flood-event": lambda i: line("event/flood", {"id": f"f{i}", "summary": f"flood {i}"}),
    "flood-bad-event": lambda i: line(bad_event_type(i), {"id": f"b{i}", "summary": f"bad {i}"}),
    "flood-cancelled": lambda i: line("notifications/cancelled", {"requestId": i}),
    "flood-progress": lambda i: line(
        "notifications/progress",
        {
            "progressToken": progress_token[0] if progress_token else f"nobody-{i}",
            "progress": i,
            "message": "still going",
        },
    ),
    "garbage": lambda i: GARBAGE[i % len(GARBAGE)],
    "garbage-lines": lambda i: SHORT_GARBAGE[i % len(SHORT_GARBAGE)],
}
REQUESTS = {
    "flood-ping": lambda i: line("ping", None, f"p{i}"),
    "flood-roots": lambda i: line("roots/list", {}, f"r{i}"),
    "flood-elicit": lambda i: line(
        "elicitation/create",
        {
            "message": "Your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
        f"e{i}",
    ),
}


def huge_lines() -> None:
    piece = b"x" * (1024 * 1024)
    while True:
        write(b'{"jsonrpc": "2.0", "method": "event/huge", "params": {"data": "')
        for _ in range(HUGE_MB):
            write(piece)
            mark()
        write(b'"}}\n')


def endless_stderr() -> None:
    text = ("endless stderr " * 20 + "\n").encode()
    while True:
        sys.stderr.buffer.write(text * 200)
        sys.stderr.buffer.flush()
        counted(len(text) * 200)
        mark()


ODD_NAMES = [5, None, {"x": 1}, "", "a b", "a.b", "a_b", "t" * 200, "wetter_☀", "日本", "echo"]


def tools_page(cursor: str | None) -> dict:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    if MODE == "names":
        return {"tools": [{"name": n, "inputSchema": schema} for n in ODD_NAMES]}
    if MODE == "paging":
        start = int(cursor or 0)
        return {
            "tools": [{"name": f"page_{start + i}", "inputSchema": schema} for i in range(10)],
            "nextCursor": str(start + 10),
        }
    if MODE == "many-tools":  # ~2 KB a tool, PAGE_SIZE a page: each page under the line cap
        start = int(cursor or 0)
        big = {"type": "object", "description": "d" * 2000, "properties": {}}
        page = {
            "tools": [
                {"name": f"tool_{i}", "description": "x" * 100, "inputSchema": big}
                for i in range(start, min(start + PAGE_SIZE, TOOL_COUNT))
            ]
        }
        if start + PAGE_SIZE < TOOL_COUNT:
            page["nextCursor"] = str(start + PAGE_SIZE)
        return page
    tools = [{"name": "echo", "description": "Echo text back.", "inputSchema": schema}]
    if MODE == "flood-progress":
        tools.append({"name": "progress_flood", "inputSchema": schema})
    return {"tools": tools}


def call(message: dict) -> None:
    params = message.get("params") or {}
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if name == "progress_flood":
        progress_token.append((params.get("_meta") or {}).get("progressToken"))
        return  # never answers; the flood thread now reports progress for this call
    text = str(arguments.get("text", "")) if name == "echo" else f"called {name}"
    send(
        {
            "jsonrpc": "2.0",
            "id": message["id"],
            "result": {"content": [{"type": "text", "text": text}]},
        }
    )


def start_misbehaving() -> bool:
    """Begin the mode's misbehaviour; True when the server must stop reading stdin."""
    if MODE in FLOODS:
        threading.Thread(target=flood, args=(FLOODS[MODE],), daemon=True).start()
    elif MODE in REQUESTS:
        threading.Thread(target=flood, args=(REQUESTS[MODE],), daemon=True).start()
        return True
    elif MODE == "huge":
        threading.Thread(target=huge_lines, daemon=True).start()
    elif MODE == "stderr":
        threading.Thread(target=endless_stderr, daemon=True).start()
    return False


def main() -> None:
    listed = False
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        message = json.loads(raw)
        method, id_ = message.get("method"), message.get("id")
        if method == "initialize":
            if MODE == "stuck":
                mark()
                continue
            send(
                {
                    "jsonrpc": "2.0",
                    "id": id_,
                    "result": {
                        "protocolVersion": message["params"]["protocolVersion"],
                        "capabilities": {"tools": {"listChanged": True}, "logging": {}},
                        "serverInfo": {"name": f"hostile-{MODE}", "version": "1"},
                    },
                }
            )
        elif method == "tools/list":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": id_,
                    "result": tools_page((message.get("params") or {}).get("cursor")),
                }
            )
            if MODE == "paging":
                mark()
            if not listed:
                listed = True
                if start_misbehaving():
                    while True:  # deaf from now on: answers to our requests back up
                        time.sleep(3600)
        elif method == "tools/call":
            threading.Thread(target=call, args=(message,), daemon=True).start()
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": id_, "result": {}})
        elif id_ is not None and method is not None:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": id_,
                    "error": {"code": -32601, "message": f"method not found: {method}"},
                }
            )


if __name__ == "__main__":
    main()
