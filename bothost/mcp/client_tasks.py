"""Tasks a server asks the client to run: task-augmented requests, the receiving side.

In 2025-11-25 a server may put a ``task`` into the params of ``elicitation/create`` or
``sampling/createMessage`` when the client declared ``tasks.requests.elicitation.create`` or
``tasks.requests.sampling.createMessage`` (see :func:`capability`: declared only for what the
session does, so sampling only with ``sampling: true``). The client answers at once with a
``CreateTaskResult`` and does the work in the background — exactly the work a plain request
gets (:mod:`bothost.mcp.inbound` hands it over) — while the server polls ``tasks/get``, takes
the outcome with ``tasks/result`` (which waits until there is one), lists with ``tasks/list``
and stops one with ``tasks/cancel``. A request whose kind is not declared is answered as a
plain request, its ``task`` ignored, as the spec has a receiver do.

:class:`ClientTasks` is one session's store, in memory (a task does not outlive its
connection: nobody could fetch it). It is bounded, since a server may flood it:

* at most ``MAX_TASKS`` are held; a task whose result the server has fetched makes room
  for a new one, one still running or with an unfetched result does not, and a request
  past the bound is refused (-32603), so no result goes missing unfetched;
* each lives for its ``ttl`` (the server's ask, kept within ``MIN_TTL_MS`` and
  ``MAX_TTL_MS``): then it is forgotten, its work stopped and a waiting ``tasks/result``
  answered -32602, as for any unknown task.

``notifications/tasks/status`` is not sent: the spec makes it optional (MAY) and has the
server poll anyway, at the ``pollInterval`` given.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bothost.mcp import jsonrpc
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.tasks import TaskSet

RELATED_TASK = "io.modelcontextprotocol/related-task"  # the spec's _meta key
TERMINAL = ("completed", "failed", "cancelled")
# method -> where its declaration sits under capabilities.tasks.requests
AUGMENTABLE = {
    "elicitation/create": ("elicitation", "create"),
    "sampling/createMessage": ("sampling", "createMessage"),
}
SERVED = ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel")
MAX_TASKS = 16  # held at once per server: a person answers a few questions, not hundreds
DEFAULT_TTL_MS = 15 * 60_000  # when the server asks for none: past a person's answer time
MIN_TTL_MS = 1_000  # a server asking for less would lose the result before it can fetch it
MAX_TTL_MS = 60 * 60_000  # the spec has a receiver cap ttl; an hour outlasts any question
POLL_INTERVAL_MS = 1_000  # what the server is told to poll at: a person or a model, not a CPU

# the work of one request, given its params without `task`; raises McpError
Run = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


def capability(*, elicitation: bool, sampling: bool) -> dict[str, Any]:
    """The client's ``tasks`` capability: what it runs as tasks, or ``{}`` for nothing."""
    requests: dict[str, Any] = {}
    if elicitation:
        requests["elicitation"] = {"create": {}}
    if sampling:
        requests["sampling"] = {"createMessage": {}}
    return {"list": {}, "cancel": {}, "requests": requests} if requests else {}


def augmented(method: str, params: dict[str, Any], capabilities: dict[str, Any]) -> bool:
    """Whether a server's request is to run as a task: it asks for one, and the client
    declared task augmentation for its kind."""
    where = AUGMENTABLE.get(method)
    if where is None or not isinstance(params.get("task"), dict):
        return False
    declared: Any = capabilities.get("tasks")
    for key in ("requests", *where):
        declared = declared.get(key) if isinstance(declared, dict) else None
    return isinstance(declared, dict)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _not_found(why: str = "Task not found") -> McpError:
    return McpError(jsonrpc.INVALID_PARAMS, f"Failed to retrieve task: {why}")


@dataclass(eq=False)
class ClientTask:
    """One task the client runs for the server."""

    task_id: str
    method: str
    ttl_ms: int
    created_at: str
    updated_at: str
    status: str = "working"
    message: str | None = None
    outcome: dict[str, Any] | McpError | None = None
    fetched: bool = False  # tasks/result has answered it: its room may be taken
    done: asyncio.Event = field(default_factory=asyncio.Event)
    runner: asyncio.Future[Any] | None = None
    expiry: asyncio.TimerHandle | None = None

    def public(self) -> dict[str, Any]:
        """The spec's ``Task`` for this task."""
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at,
            "ttl": self.ttl_ms,
            "pollInterval": POLL_INTERVAL_MS,
        }
        if self.message:
            task["statusMessage"] = self.message
        return task

    def end(self, status: str, outcome: dict[str, Any] | McpError, message: str | None) -> bool:
        """Move to a terminal status once; False if it had one already (it stays)."""
        if self.status in TERMINAL:
            return False
        self.status, self.outcome, self.message = status, outcome, message
        self.updated_at = _now()
        self.done.set()
        return True


class ClientTasks:
    """One session's tasks run for its server (see module docstring)."""

    def __init__(self, log: logging.Logger, *, max_tasks: int = MAX_TASKS) -> None:
        self.log = log
        self.max_tasks = max_tasks
        self._tasks: dict[str, ClientTask] = {}
        self._work = TaskSet(log, "a task run for the server")

    def __len__(self) -> int:
        return len(self._tasks)

    def create(self, method: str, params: dict[str, Any], run: Run) -> dict[str, Any]:
        """Start `run` as a task; the ``CreateTaskResult``. Raises McpError when full."""
        self._make_room()
        requested = params["task"].get("ttl")
        ttl = DEFAULT_TTL_MS
        if type(requested) is int:
            ttl = min(max(requested, MIN_TTL_MS), MAX_TTL_MS)
        stamp = _now()
        task = ClientTask(secrets.token_urlsafe(18), method, ttl, stamp, stamp)
        self._tasks[task.task_id] = task
        plain = {key: value for key, value in params.items() if key != "task"}
        task.runner = self._work.spawn(self._run(task, run, plain))
        loop = asyncio.get_running_loop()
        task.expiry = loop.call_later(ttl / 1000, self._expire, task.task_id)
        self.log.info("%s runs as task %s (ttl %d ms)", method, task.task_id, ttl)
        return {"task": task.public()}

    def _make_room(self) -> None:
        if len(self._tasks) < self.max_tasks:
            return
        fetched = next((t for t in self._tasks.values() if t.fetched), None)
        if fetched is None:
            raise McpError(
                jsonrpc.INTERNAL_ERROR,
                f"too many tasks: {self.max_tasks} are running or have results not yet "
                "fetched (tasks/result)",
            )
        self._forget(fetched)

    async def _run(self, task: ClientTask, run: Run, params: dict[str, Any]) -> None:
        try:
            outcome: dict[str, Any] | McpError = await run(params)
        except McpError as exc:
            outcome = exc
        except asyncio.CancelledError:
            raise  # cancelled or expired: the status is set by whoever stopped it
        except Exception:  # boundary: one task's failure is its result, not the session's
            self.log.exception("task %s (%s) failed", task.task_id, task.method)
            outcome = McpError(jsonrpc.INTERNAL_ERROR, "client error")
        if isinstance(outcome, McpError):
            task.end("failed", outcome, outcome.message)
        else:
            task.end("completed", outcome, None)

    async def serve(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Answer one of the server's ``tasks/*`` requests (``SERVED``); raises McpError."""
        if method == "tasks/list":
            if params.get("cursor") is not None:  # we never hand one out
                raise McpError(jsonrpc.INVALID_PARAMS, "tasks/list: unknown cursor")
            return {"tasks": [task.public() for task in self._tasks.values()]}
        task = self._known(params.get("taskId"))
        if method == "tasks/get":
            return task.public()
        if method == "tasks/cancel":
            return self._cancel(task)
        return await self._result(task)

    def _known(self, task_id: Any) -> ClientTask:
        task = self._tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None:
            raise _not_found()
        return task

    def _cancel(self, task: ClientTask) -> dict[str, Any]:
        why = "the server cancelled the task"
        if not task.end("cancelled", McpError(jsonrpc.INTERNAL_ERROR, why), "cancelled by request"):
            raise McpError(
                jsonrpc.INVALID_PARAMS,
                f"Cannot cancel task: already in terminal status {task.status!r}",
            )
        if task.runner is not None:
            task.runner.cancel()  # a person's question is withdrawn, a model call stopped
        self.log.info("task %s (%s) cancelled by the server", task.task_id, task.method)
        return task.public()

    async def _result(self, task: ClientTask) -> dict[str, Any]:
        """What the request would have answered, once there is an answer (blocks)."""
        await task.done.wait()
        outcome = task.outcome
        if isinstance(outcome, McpError):
            raise McpError(outcome.code, outcome.message, outcome.data)
        if outcome is None:  # cannot happen: `done` is set with an outcome
            raise McpError(jsonrpc.INTERNAL_ERROR, "the task has no result")
        task.fetched = True
        meta = outcome.get("_meta")
        related = {RELATED_TASK: {"taskId": task.task_id}}  # the spec wants it on this answer
        return {**outcome, "_meta": {**meta, **related} if isinstance(meta, dict) else related}

    def _expire(self, task_id: str) -> None:
        task = self._tasks.get(task_id)
        if task is None:
            return
        if task.end("failed", _not_found("Task has expired"), "expired"):
            self.log.info("task %s (%s) expired unfinished", task_id, task.method)
        self._forget(task)

    def _forget(self, task: ClientTask) -> None:
        self._tasks.pop(task.task_id, None)
        if task.expiry is not None:
            task.expiry.cancel()
        if task.runner is not None and not task.runner.done():
            task.runner.cancel()

    async def close(self) -> None:
        """The connection is over: stop every task's work, answer who waits for one."""
        for task in list(self._tasks.values()):
            task.end("cancelled", McpError(jsonrpc.CONNECTION_CLOSED, "session closed"), None)
            self._forget(task)
        await self._work.wait()
