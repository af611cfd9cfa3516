"""A tool call run as an MCP task (2025-11-25): created, polled, shown, cancelled, fetched.

A tool whose ``execution.taskSupport`` is ``required`` must be called with a ``task`` in
the ``tools/call`` params, on a server that declares ``tasks.requests.tools.call``; the
server answers at once with a task, and the call's outcome is fetched later. bothost waits
for it like for any other call, so a person and the model see one ordinary call:

* **Polling.** ``tasks/get`` at the server's ``pollInterval`` (bounded, see the constants),
  and at once when a ``notifications/tasks/status`` says something changed. Each new
  status message is shown as progress, the way ``notifications/progress`` is.
* **Deadline.** The whole task runs under one :class:`~bothost.mcp.deadline.CallDeadline`:
  a change of status (or of its message or time) is news, like progress, renewing the
  server's ``timeout`` up to its ``max_timeout``; a server's question pauses it. A task
  that stays silent runs out like a silent call, and is cancelled.
* **Input.** At ``input_required`` the server's questions come on the ``tasks/result``
  request (the spec's way), so that request is sent then, and polling goes on beside it.
  Questions name their task (``io.modelcontextprotocol/related-task``), which is how the
  session finds the call's person and pauses this deadline, on stdio too.
* **Outcome.** ``completed`` or ``failed``: ``tasks/result`` answers exactly what the call
  would have, made into a :class:`~bothost.mcp.content.CallResult` as usual; a failed task
  whose result cannot be fetched is an error result with its status message.
  ``cancelled`` (by the server) is an error result.
* **Giving up.** A timeout, or the caller cancelled (``stop``): ``tasks/cancel`` is sent in
  the background when the server supports it.

Tools with ``optional`` task support are called plainly: a turn waits for its tool's
answer either way, and a plain call needs one round trip where a task needs three or more,
with the same progress, questions, deadline and ``stop`` (see :func:`runs_as_task`).
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bothost.mcp import content, jsonrpc
from bothost.mcp.deadline import CallDeadline
from bothost.mcp.elicitation import Asker
from bothost.mcp.jsonrpc import McpError

if TYPE_CHECKING:
    from bothost.mcp.session import Callback, ClientSession

RELATED_TASK = "io.modelcontextprotocol/related-task"  # the spec's _meta key
TERMINAL = ("completed", "failed", "cancelled")
DEFAULT_POLL = 1.0  # seconds between tasks/get when the server suggests nothing
MIN_POLL = 0.02  # a server that asks for 0 ms must not make us spin
MAX_POLL = 30.0  # a server that asks for an hour still gets looked at
# The task's lifetime we ask for: longer than we may wait for it (max_timeout), so the
# server keeps it while we still want its result; the server may choose otherwise.
TTL_MARGIN = 60.0
CANCEL_TIMEOUT = 10.0  # tasks/cancel is sent in the background; a deaf server gets no more
SHOW_TIMEOUT = 10.0  # showing one status message (a platform's status call)

_tokens = itertools.count(1)


def task_support(tool: dict[str, Any] | None) -> str:
    """``required``, ``optional`` or ``forbidden`` (the default) for a listed tool."""
    execution = tool.get("execution") if isinstance(tool, dict) else None
    value = execution.get("taskSupport") if isinstance(execution, dict) else None
    return value if value in ("required", "optional") else "forbidden"


def server_runs_tool_tasks(capabilities: dict[str, Any]) -> bool:
    tasks = capabilities.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    return isinstance(tools, dict) and isinstance(tools.get("call"), dict)


def runs_as_task(tool: dict[str, Any] | None, capabilities: dict[str, Any]) -> bool:
    """Whether a call of `tool` is sent as a task: only when the tool requires it and the
    server declares task-augmented tool calls (without that, the spec forbids a task)."""
    return task_support(tool) == "required" and server_runs_tool_tasks(capabilities)


def related_task(params: dict[str, Any]) -> str | None:
    """The task a server's message says it belongs to, if any."""
    meta = params.get("_meta")
    related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
    task_id = related.get("taskId") if isinstance(related, dict) else None
    return task_id if isinstance(task_id, str) else None


@dataclass(eq=False)
class TaskCall:
    """One task-augmented call in flight: what the session routes to it."""

    deadline: CallDeadline
    asker: Asker | None = None
    on_progress: Callback | None = None  # the call's, for the server's progress notifications
    token: str = field(default_factory=lambda: f"task-call-{next(_tokens)}")  # progress
    task_id: str | None = None
    status: str = "working"
    message: str = ""
    poll: float = DEFAULT_POLL
    _seen: tuple[Any, ...] = ()
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def update(self, task: dict[str, Any]) -> None:
        """Take a task state (a tasks/get answer or a status notification)."""
        status = task.get("status")
        if not isinstance(status, str) or self.status in TERMINAL:
            return
        seen = (status, task.get("statusMessage"), task.get("lastUpdatedAt"))
        if seen == self._seen:
            return
        self._seen = seen
        self.status = status
        message = task.get("statusMessage")
        self.message = message if isinstance(message, str) else ""
        interval = task.get("pollInterval")
        if isinstance(interval, int | float) and not isinstance(interval, bool):
            self.poll = min(max(interval / 1000, MIN_POLL), MAX_POLL)
        self.deadline.progressed()  # a change is news, like progress
        self.changed.set()


async def run(
    session: ClientSession,
    name: str,
    arguments: dict[str, Any],
    *,
    timeout: float,
    max_timeout: float,
    on_progress: Callback | None,
    asker: Asker | None,
) -> content.CallResult:
    """Call tool `name` as a task (see module docstring); failures are error results."""
    call = TaskCall(CallDeadline(timeout, max_timeout), asker, on_progress)
    session.task_calls.add(call)
    try:
        async with asyncio.timeout(None) as scope:
            with call.deadline.attach(scope):
                return await _drive(session, call, name, arguments, on_progress)
    except TimeoutError:
        why = (
            f"stopped at max_timeout: still running after {call.deadline.longest:g} s"
            if call.deadline.capped
            else f"timed out after {timeout:g} s without news"
        )
        _cancel(session, call)
        return content.CallResult.failure(f"{session.name}/{name} {why}")
    except McpError as exc:
        _cancel(session, call)
        why = content.SDK_ERROR_PREFIX.sub("", exc.message)  # codes are not for people
        return content.CallResult.failure(f"{session.name}/{name} failed: {why}")
    except asyncio.CancelledError:
        _cancel(session, call)
        raise
    finally:
        session.task_calls.discard(call)


async def _drive(
    session: ClientSession,
    call: TaskCall,
    name: str,
    arguments: dict[str, Any],
    on_progress: Callback | None,
) -> content.CallResult:
    ttl = int((call.deadline.longest + TTL_MARGIN) * 1000)
    created = await session.request(
        "tools/call",
        {
            "name": name,
            "arguments": arguments,
            "task": {"ttl": ttl},
            "_meta": {"progressToken": call.token},  # valid for the task's whole life
        },
        timeout=call.deadline.timeout,
        asker=call.asker,
    )
    task = created.get("task")
    if not isinstance(task, dict) or not isinstance(task.get("taskId"), str):
        return content.from_result(created, session.media_dir)  # it ran as a plain call
    call.task_id = task["taskId"]
    call.update(task)
    shown = ""
    fetch: asyncio.Future[dict[str, Any] | McpError] | None = None
    try:
        while True:
            if (call.message or call.status) != shown:
                shown = call.message or call.status
                await _show(session, on_progress, shown)
            if call.status == "cancelled":
                why = f": {call.message}" if call.message else ""
                raise McpError(jsonrpc.INTERNAL_ERROR, f"the server cancelled the task{why}")
            if fetch is None and (call.status in TERMINAL or call.status == "input_required"):
                fetch = asyncio.ensure_future(_result(session, call))
            if fetch is not None and (fetch.done() or call.status in TERMINAL):
                return _outcome(session, call, await fetch)
            await _pause(call, fetch)
            if fetch is None or not fetch.done():
                call.update(await _get(session, call))
    finally:
        if fetch is not None and not fetch.done():
            fetch.cancel()
            await asyncio.gather(fetch, return_exceptions=True)


async def _get(session: ClientSession, call: TaskCall) -> dict[str, Any]:
    try:
        return await session.request(
            "tasks/get", {"taskId": call.task_id}, timeout=call.deadline.timeout
        )
    except McpError as exc:
        if exc.code != jsonrpc.INVALID_PARAMS:  # the spec's answer for an unknown task
            raise
        call.status = "cancelled"  # nothing left to cancel
        why = content.SDK_ERROR_PREFIX.sub("", exc.message)
        raise McpError(exc.code, f"the server no longer knows the task ({why})") from None


async def _result(session: ClientSession, call: TaskCall) -> dict[str, Any] | McpError:
    """tasks/result: blocks on the server until the task is over; its questions come on
    it meanwhile. Bounded by the task's own deadline, so it gets the longest one here."""
    try:
        return await session.request(
            "tasks/result",
            {"taskId": call.task_id},
            timeout=call.deadline.longest,
            asker=call.asker,
        )
    except McpError as exc:
        return exc


def _outcome(
    session: ClientSession, call: TaskCall, answer: dict[str, Any] | McpError
) -> content.CallResult:
    if isinstance(answer, McpError):
        if call.status == "failed" and call.message:
            raise McpError(answer.code, call.message)
        raise answer
    result = content.from_result(answer, session.media_dir)
    if call.status == "failed" and not result.is_error:  # failed, whatever the body says
        result.is_error = True
        result.text = result.text or call.message or "the task failed"
    return result


async def _pause(call: TaskCall, fetch: asyncio.Future[Any] | None) -> None:
    """Until the next poll is due, news came, or the result arrived."""
    call.changed.clear()
    waiter = asyncio.ensure_future(call.changed.wait())
    try:
        await asyncio.wait(
            [waiter, *([fetch] if fetch is not None else [])],
            timeout=call.poll,
            return_when=asyncio.FIRST_COMPLETED,
        )
    finally:
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)


async def _show(session: ClientSession, on_progress: Callback | None, message: str) -> None:
    if on_progress is None:
        return
    try:
        shown = on_progress(None, None, message)
        if asyncio.iscoroutine(shown) or isinstance(shown, asyncio.Future):
            async with asyncio.timeout(SHOW_TIMEOUT):
                await shown
    except TimeoutError:
        session.log.warning("showing a task's status took over %g s", SHOW_TIMEOUT)
    except Exception:  # boundary: the caller's callback
        session.log.exception("progress callback failed")


def _cancel(session: ClientSession, call: TaskCall) -> None:
    """Tell the server to stop the task, in the background (best effort)."""
    if call.task_id is None or call.status in TERMINAL or session.closed:
        return
    tasks = session.capabilities.get("tasks")
    if not isinstance(tasks, dict) or not isinstance(tasks.get("cancel"), dict):
        session.log.info("task %s left running: the server cannot cancel tasks", call.task_id)
        return

    async def cancel() -> None:
        try:
            await session.request("tasks/cancel", {"taskId": call.task_id}, timeout=CANCEL_TIMEOUT)
        except McpError as exc:
            session.log.info("tasks/cancel %s: %s", call.task_id, exc.message)

    session.inbound.spawn(cancel())
