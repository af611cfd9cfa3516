"""A raw JSON-RPC MCP server over stdio that asks the *client* to run tasks (2025-11-25).

The official SDK 2.x does not send task-augmented requests (its 2025-11-25 method table
leaves ``tasks/*`` out), so this server speaks the wire format itself. Tools (plain calls;
each runs in a thread of its own, so a call may wait on the client's answers):

* ``ask_as_task`` — sends ``elicitation/create`` with a ``task`` (``message``, ``ttl``),
  polls ``tasks/get`` until the task is over, lists the client's tasks, fetches
  ``tasks/result``, and answers with what the person said and the statuses it saw: the whole
  flow of a tool that asks its question as a task;
* ``sample_as_task`` — the same with ``sampling/createMessage`` (``text``, ``ttl``): the
  client's model, asked as a task;
* ``start`` — sends ``method`` with ``params`` and a ``task`` (``ttl`` if given) and answers
  with the client's whole answer message, as JSON;
* ``rpc`` — sends ``method`` with ``params`` (``tasks/get``, ``tasks/cancel``, …) and answers
  with the client's whole answer message, as JSON;
* ``capabilities`` — the client's capabilities from ``initialize``.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time

ANSWER_WAIT = 30.0  # how long to wait for one client answer (longer than any test)
POLL = 0.02  # seconds between tasks/get (faster than the client suggests: tests are quick)
TERMINAL = ("completed", "failed", "cancelled")

out_lock = threading.Lock()
state = threading.Condition()
answers: dict[object, dict] = {}
client: dict = {}
ids = itertools.count(1)


def write(message: dict) -> None:
    with out_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def text(value: str, error: bool = False) -> dict:
    return {"content": [{"type": "text", "text": value}], "isError": error}


def ask(method: str, params: dict) -> dict:
    """Send a request to the client; its whole answer message."""
    id_ = f"s-{next(ids)}"
    write({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
    with state:
        state.wait_for(lambda: id_ in answers, timeout=ANSWER_WAIT)
        return answers.pop(id_, {"error": {"code": 0, "message": "no answer"}})


def ask_as_task(args: dict) -> str:
    question = {
        "message": args.get("message", "Which colour?"),
        "requestedSchema": {"type": "object", "properties": {"colour": {"type": "string"}}},
    }
    return as_task("elicitation/create", question, args)


def sample_as_task(args: dict) -> str:
    content = {"type": "text", "text": args.get("text", "hello")}
    request = {"messages": [{"role": "user", "content": content}], "maxTokens": 100}
    return as_task("sampling/createMessage", request, args)


def as_task(method: str, params: dict, args: dict) -> str:
    """Send `method` as a task, poll it to its end, list, fetch: what was seen, as JSON."""
    created = ask(method, {**params, "task": {"ttl": int(args.get("ttl", 60_000))}})
    task_id = created["result"]["task"]["taskId"]
    statuses = [created["result"]["task"]["status"]]
    deadline = time.monotonic() + ANSWER_WAIT
    while statuses[-1] not in TERMINAL and time.monotonic() < deadline:
        time.sleep(POLL)
        status = ask("tasks/get", {"taskId": task_id})["result"]["status"]
        if status != statuses[-1]:
            statuses.append(status)
    listed = [t["taskId"] for t in ask("tasks/list", {})["result"]["tasks"]]
    result = ask("tasks/result", {"taskId": task_id})
    said = {
        "statuses": statuses,
        "listed": task_id in listed,
        "result": result.get("result"),
        "related": result.get("result", {})
        .get("_meta", {})
        .get("io.modelcontextprotocol/related-task")
        == {"taskId": task_id},
    }
    return json.dumps(said)


def call(id_: object, params: dict) -> None:
    name, args = params.get("name"), params.get("arguments") or {}
    if name == "ask_as_task":
        answer = text(ask_as_task(args))
    elif name == "sample_as_task":
        answer = text(sample_as_task(args))
    elif name == "start":
        task = {"ttl": args["ttl"]} if "ttl" in args else {}
        answer = text(json.dumps(ask(args["method"], {**args.get("params", {}), "task": task})))
    elif name == "rpc":
        answer = text(json.dumps(ask(args["method"], args.get("params", {}))))
    elif name == "capabilities":
        answer = text(json.dumps(client))
    else:
        answer = text(f"no tool {name}", error=True)
    write({"jsonrpc": "2.0", "id": id_, "result": answer})


TOOLS = [
    {"name": name, "inputSchema": {"type": "object"}}
    for name in ("ask_as_task", "sample_as_task", "start", "rpc", "capabilities")
]


def handle(message: dict) -> None:
    method, id_, params = message.get("method"), message.get("id"), message.get("params") or {}
    if method is None:  # the client's answer to one of our requests
        with state:
            answers[id_] = message
            state.notify_all()
    elif id_ is None:
        return
    elif method == "initialize":
        client.update(params.get("capabilities") or {})
        answer = {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "requestor-server", "version": "1"},
        }
        write({"jsonrpc": "2.0", "id": id_, "result": answer})
    elif method == "tools/list":
        write({"jsonrpc": "2.0", "id": id_, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        threading.Thread(target=call, args=(id_, params), daemon=True).start()
    elif method == "ping":
        write({"jsonrpc": "2.0", "id": id_, "result": {}})
    else:
        error = {"code": -32601, "message": f"method not found: {method}"}
        write({"jsonrpc": "2.0", "id": id_, "error": error})


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            handle(json.loads(line))


if __name__ == "__main__":
    main()
