"""A raw JSON-RPC MCP server over stdio whose tools run as MCP tasks (2025-11-25).

It declares ``tasks.cancel`` and ``tasks.requests.tools.call``. Tools that require a task:

* ``research`` — ``steps`` steps of ``interval`` seconds, each a new ``statusMessage``
  (sent as ``notifications/tasks/status`` too when ``notify`` is set), then completes;
* ``stuck`` — stays ``working`` for good; with ``chatty`` its status message changes every
  ``interval`` seconds, forever;
* ``broken`` — fails: ``tasks/result`` answers a tool error result, or with ``rpc_error`` a
  JSON-RPC error, and ``status_only`` makes it answer ``tasks/result`` with "no result";
* ``ask`` — moves to ``input_required`` and, once ``tasks/result`` is asked, puts an
  ``elicitation/create`` (naming the task) to the client, then completes with the answer;
* ``lost`` — creates a task that ``tasks/get`` then does not know (an expired task).

``measured`` declares an ``outputSchema`` (a number ``temperature``) and completes with
structured content that matches it, or with ``shape`` "wrong" a string, "missing" none.

``either`` accepts a task or a plain call (``taskSupport: optional``) and says which it got;
``plain`` has no ``execution`` at all; ``seen`` (plain) tells what the server saw: the
task ids it was asked to cancel, the ``tasks/get`` count per task, and the task
ids that got ``notifications/cancelled`` for their creating request.
"""

from __future__ import annotations

import json
import sys
import threading
import uuid
from datetime import UTC, datetime

ANSWER_WAIT = 30.0  # how long ``ask`` waits for the client's answer (longer than any test)
RELATED = "io.modelcontextprotocol/related-task"
TERMINAL = ("completed", "failed", "cancelled")

out_lock = threading.Lock()
state = threading.Condition()  # guards everything below; notified on each change
tasks: dict[str, dict] = {}
answers: dict[object, dict] = {}
cancelled: list[str] = []
gets: dict[str, int] = {}


def write(message: dict) -> None:
    with out_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def text(value: str, error: bool = False) -> dict:
    return {"content": [{"type": "text", "text": value}], "isError": error}


def public(task: dict) -> dict:
    keys = ("taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttl")
    out = {k: task[k] for k in keys if task.get(k) is not None}
    out["pollInterval"] = task["pollInterval"]
    return out


def update(task_id: str, status: str, message: str | None = None, **outcome) -> bool:
    """Move a task on (never out of a terminal status); False if it was already over."""
    with state:
        task = tasks[task_id]
        if task["status"] in TERMINAL:
            return False
        task.update(status=status, statusMessage=message, lastUpdatedAt=now(), **outcome)
        state.notify_all()
        notify = task["notify"]
        shown = public(task)
    if notify:
        write({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": shown})
    return True


def over(task_id: str, seconds: float) -> bool:
    """Wait `seconds`; True if the task ended (was cancelled) meanwhile."""
    with state:
        return state.wait_for(lambda: tasks[task_id]["status"] in TERMINAL, timeout=seconds)


def ask_client(task_id: str) -> dict:
    ask_id = f"ask-{task_id}"
    question = {
        "message": "Which one?",
        "requestedSchema": {"type": "object", "properties": {"choice": {"type": "string"}}},
        "_meta": {RELATED: {"taskId": task_id}},
    }
    write({"jsonrpc": "2.0", "id": ask_id, "method": "elicitation/create", "params": question})
    with state:
        state.wait_for(lambda: ask_id in answers, timeout=ANSWER_WAIT)
        return answers.pop(ask_id, {"error": "no answer"})


def work(task_id: str, name: str, args: dict) -> None:
    interval = float(args.get("interval", 0.05))
    if name == "research":
        steps = int(args.get("steps", 3))
        for step in range(1, steps + 1):
            update(task_id, "working", f"step {step} of {steps}")
            if over(task_id, interval):
                return
        update(task_id, "completed", "done", result=text(f"researched in {steps} steps"))
    elif name == "stuck":
        step = 0
        while not over(task_id, interval):
            step += 1
            if args.get("chatty"):
                update(task_id, "working", f"still going ({step})")
    elif name == "broken":
        if args.get("rpc_error"):
            outcome = {"error": {"code": -32603, "message": "disk full"}}
        elif args.get("status_only"):
            outcome = {"error": {"code": -32602, "message": "no result stored"}}
        else:
            outcome = {"result": text("could not write the report: disk full", error=True)}
        update(task_id, "failed", "disk full", **outcome)
    elif name == "ask":
        update(task_id, "input_required", "waiting for a choice")
        with state:  # the question goes out on the tasks/result stream, so wait for one
            state.wait_for(lambda: tasks[task_id]["result_asked"], timeout=ANSWER_WAIT)
        answer = ask_client(task_id)
        update(task_id, "working", "got the choice")
        update(task_id, "completed", None, result=text(f"chose {json.dumps(answer.get('result'))}"))
    elif name == "either":
        update(task_id, "completed", None, result=text("ran as a task"))
    elif name == "measured":
        value = {"ok": {"temperature": 21.5}, "wrong": {"temperature": "warm"}}
        answer = text("warm")
        if args.get("shape", "ok") in value:
            answer["structuredContent"] = value[args.get("shape", "ok")]
        update(task_id, "completed", None, result=answer)


def create(id_: object, name: str, args: dict, params: dict) -> None:
    task_id = str(uuid.uuid4())
    stamp = now()
    requested = params["task"].get("ttl")
    with state:
        tasks[task_id] = {
            "taskId": task_id,
            "status": "working",
            "createdAt": stamp,
            "lastUpdatedAt": stamp,
            "ttl": requested if isinstance(requested, int) else 60_000,
            "pollInterval": int(args.get("poll", 20)),
            "notify": bool(args.get("notify")),
            "result_asked": False,
            "request": id_,
        }
        shown = public(tasks[task_id])
    write({"jsonrpc": "2.0", "id": id_, "result": {"task": shown}})
    if name == "lost":
        with state:
            del tasks[task_id]
        return
    threading.Thread(target=work, args=(task_id, name, args), daemon=True).start()


def tool(name: str, support: str | None = "required") -> dict:
    definition = {"name": name, "inputSchema": {"type": "object"}}
    if support:
        definition["execution"] = {"taskSupport": support}
    return definition


MEASURED = {
    "type": "object",
    "properties": {"temperature": {"type": "number"}},
    "required": ["temperature"],
}
TOOLS = [
    *(tool(n) for n in ("research", "stuck", "broken", "ask", "lost")),
    {**tool("measured"), "outputSchema": MEASURED},
    tool("either", "optional"),
    tool("plain", None),
    tool("seen", None),
]


def call(id_: object, params: dict) -> None:
    name, args = params.get("name"), params.get("arguments") or {}
    required = {t["name"] for t in TOOLS if t.get("execution", {}).get("taskSupport") == "required"}
    if "task" in params and isinstance(params["task"], dict) and name not in ("plain", "seen"):
        create(id_, name, args, params)
    elif name in required:
        error = {"code": -32601, "message": f"{name} must be called as a task"}
        write({"jsonrpc": "2.0", "id": id_, "error": error})
    elif name == "seen":
        with state:
            seen = {"cancelled": cancelled, "gets": gets, "aborted": aborted_requests()}
            write({"jsonrpc": "2.0", "id": id_, "result": text(json.dumps(seen))})
    else:
        write({"jsonrpc": "2.0", "id": id_, "result": text(f"{name}: plain call")})


def aborted_requests() -> list[str]:
    return [t["taskId"] for t in tasks.values() if t.get("aborted")]


def known(id_: object, task_id: object) -> dict | None:
    task = tasks.get(task_id) if isinstance(task_id, str) else None
    if task is None:
        error = {"code": -32602, "message": "Failed to retrieve task: Task not found"}
        write({"jsonrpc": "2.0", "id": id_, "error": error})
    return task


def result(id_: object, task_id: object) -> None:
    """tasks/result: block until the task is over, then answer what the call would have."""
    with state:
        task = known(id_, task_id)
        if task is None:
            return
        task["result_asked"] = True
        state.notify_all()
        state.wait_for(lambda: task["status"] in TERMINAL)
        outcome = {k: task[k] for k in ("result", "error") if k in task}
    if "error" in outcome:
        write({"jsonrpc": "2.0", "id": id_, "error": outcome["error"]})
        return
    answer = dict(outcome.get("result") or text("cancelled", error=True))
    answer["_meta"] = {RELATED: {"taskId": task_id}}
    write({"jsonrpc": "2.0", "id": id_, "result": answer})


def handle(message: dict) -> None:
    method, id_, params = message.get("method"), message.get("id"), message.get("params") or {}
    if method is None:  # the client's answer to our question
        with state:
            answers[id_] = message
            state.notify_all()
    elif method == "notifications/cancelled":
        with state:
            for task in tasks.values():
                if task["request"] == params.get("requestId"):
                    task["aborted"] = True
    elif id_ is None:
        return
    elif method == "initialize":
        capabilities = {"tools": {}, "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}}
        answer = {
            "protocolVersion": params["protocolVersion"],
            "capabilities": capabilities,
            "serverInfo": {"name": "task-server", "version": "1"},
        }
        write({"jsonrpc": "2.0", "id": id_, "result": answer})
        sys.stderr.write(f"client capabilities: {json.dumps(params.get('capabilities'))}\n")
        sys.stderr.flush()
    elif method == "tools/list":
        write({"jsonrpc": "2.0", "id": id_, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        threading.Thread(target=call, args=(id_, params), daemon=True).start()
    elif method == "tasks/get":
        with state:
            task = known(id_, params.get("taskId"))
            if task is not None:
                gets[task["taskId"]] = gets.get(task["taskId"], 0) + 1
                write({"jsonrpc": "2.0", "id": id_, "result": public(task)})
    elif method == "tasks/result":
        threading.Thread(target=result, args=(id_, params.get("taskId")), daemon=True).start()
    elif method == "tasks/cancel":
        with state:
            task = known(id_, params.get("taskId"))
            if task is None:
                return
            cancelled.append(task["taskId"])
        if not update(task["taskId"], "cancelled", "cancelled by the client"):
            error = {"code": -32602, "message": "Cannot cancel task in terminal status"}
            write({"jsonrpc": "2.0", "id": id_, "error": error})
        else:
            write({"jsonrpc": "2.0", "id": id_, "result": public(task)})
    else:
        error = {"code": -32601, "message": f"method not found: {method}"}
        write({"jsonrpc": "2.0", "id": id_, "error": error})


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            handle(json.loads(line))


if __name__ == "__main__":
    main()
