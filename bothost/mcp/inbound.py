"""What a server sends unasked: its requests to the client and its notifications.

Server requests each run in their own task (an elicitation may wait minutes for a person)
and are answered by id: ``ping``, ``roots/list``, ``elicitation/create`` (asked of whoever
the session says the question belongs to, see :mod:`bothost.mcp.elicitation`; the calls it
may belong to wait without a clock meanwhile), ``sampling/createMessage`` (the host's
sampler, with the conversation it belongs to: :mod:`bothost.mcp.sampling`); anything else
gets -32601 at once. ``notifications/elicitation/complete`` is noted in the server's log.
An elicitation or sampling request that asks to run as a task, and ``tasks/*`` requests
about such tasks, go to the session's :class:`~bothost.mcp.client_tasks.ClientTasks`.

:class:`Inbound` decides *when* and *how much*; the session keeps all the state. It reaches
its session only through :class:`InboundOwner` — send an answer, say whose question or
progress it is, re-list the tools, take an event — and never writes the session's fields.

Everything here is bounded, because a server may flood any of it (issue 14: a
``list_changed`` flood once spawned a task per notification and grew the host to 1.2 GB):

* at most ``MAX_SERVER_REQUESTS`` server requests are handled at once, each answer is
  written within a deadline, and requests beyond the bound are dropped (counted, logged);
* ``event/*`` notifications go through one queue, handled in the order the server sent
  them by one worker that takes whatever has gathered (up to ``EVENT_BATCH``) off the queue
  at once and waits for it to be stored, so a burst costs a few group commits and no task
  per event, and the reader fills the queue again meanwhile; when the queue holds
  ``QUEUE_HIGH`` messages or ``QUEUE_HIGH_BYTES`` bytes the readers pause before the next
  message (stdio: the server blocks on its full pipe; Streamable HTTP: the SSE stream is
  not read, so TCP holds the server's writes): nothing lost, nothing grows, and with the
  batch being stored at most twice that is held. Only what arrives past twice the marks
  in one piece the reader cannot split (a JSON-RPC batch, a JSON answer) is dropped;
* ``notifications/tools/list_changed`` only marks the tool list stale: one re-listing runs
  at a time, at most one more is pending, and they start at most once per
  ``RELIST_INTERVAL`` however many notifications arrive; a listing whose cursor the
  server refuses after a list_changed hands its waiters the next listing's outcome (once);
* progress for a call moves its deadline at once (:mod:`bothost.mcp.deadline`) and is
  reported one at a time; what arrives meanwhile replaces the not-yet-shown value, so a
  progress flood makes no tasks;
* log messages are written at once (the server's log rotates), up to ``LOG_BURST`` at a
  time and ``LOG_RATE`` a second after that: beyond, they are dropped and counted (each
  written line costs the host ~80 µs of CPU, and a flood of them held the event loop so long
  that a neighbour's tool call took 19 s at load 10); ``resources/list_changed``
  and ``prompts/list_changed`` are said in the log (at most one line per kind every 10 s):
  both are listed afresh each time they are asked for, so nothing held goes stale;
  ``resources/updated`` and ``resources/list_changed`` go to the session's subscriptions
  (:mod:`bothost.mcp.subscriptions`, which coalesce them per URI); other notifications are
  counted and ignored.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from bothost.mcp import client_tasks, elicitation, jsonrpc, listen, sampling, serverlog, taskcall
from bothost.mcp.flood import LOG_BURST, LOG_RATE, Budget, Tally
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.tasks import TaskSet
from bothost.mcp.transport import TransportError

CLOSE_DRAIN = 2.0  # on a graceful close, queued notifications (events!) get this long
LIST_CHANGED_SETTLE = 0.05  # wait this long after list_changed so a burst becomes one listing
RELIST_INTERVAL = 1.0  # re-listings start at most this often, however often list_changed comes
QUEUE_HIGH = 1_000  # queued notifications at which the readers pause…
QUEUE_HIGH_BYTES = 16 * 1024 * 1024  # …or queued bytes (a few big events weigh more than many)
QUEUE_DROP_FACTOR = 2  # past this multiple of the marks, what arrived in one piece is dropped
DROP_COUNT = QUEUE_HIGH * QUEUE_DROP_FACTOR
DROP_BYTES = QUEUE_HIGH_BYTES * QUEUE_DROP_FACTOR
EVENT_BATCH = QUEUE_HIGH  # events handed over at once: all a paused reader has queued
MAX_SERVER_REQUESTS = 32  # server requests handled at once; a flood beyond is dropped
ANSWER_TIMEOUT = 10.0  # writing one answer; a server that stops reading its stdin gets none
PROGRESS_TIMEOUT = 10.0  # showing one progress update (a platform's status call)
LISTED_AFRESH = ("resources", "prompts")  # listed on each ask: nothing of theirs is held
LIST_CHANGED = {f"notifications/{kind}/list_changed": kind for kind in LISTED_AFRESH}
EMPTY: dict[str, Any] = {}  # an event without params, told apart by identity (never queued)


async def await_maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def hashable(value: Any) -> bool:
    """An id or token a server sent that can be looked up (a JSON object or list cannot)."""
    return isinstance(value, str | int) and not isinstance(value, bool)


class InboundOwner(Protocol):
    """What inbound handling may ask of its session: all of it, and nothing else."""

    async def send(self, message: jsonrpc.Message) -> None:
        """Write an answer to a server request; raises TransportError."""

    def client_capabilities(self, version: str | None = None) -> dict[str, Any]:
        """What the client declared (which requests it runs as tasks)."""

    def asker_for(self, related: Any, task: str | None = None) -> elicitation.Ask | None:
        """Who answers a server question sent on the stream of request `related` (or None),
        or naming `task` (an MCP task id)."""

    def conversation_of(self, related: Any, task: str | None = None) -> elicitation.Asker | None:
        """The Asker of the one conversation a server request may belong to, or None."""

    @property
    def sample(self) -> sampling.Sample | None:
        """The host's sampler for this server; None while sampling is off for it."""

    def progress_for(self, token: Any) -> Callable[..., Any] | None:
        """The progress callback of the call in flight named by `token`, if any."""

    def progressed(self, token: Any) -> None:
        """The call in flight named by `token` reported progress (its deadline moves)."""

    def asking(self, related: Any, task: str | None = None) -> AbstractContextManager[None]:
        """Hold the deadlines of the calls a question sent on `related`'s stream (or naming
        `task`) may belong to while it waits for a person."""

    def task_status(self, params: dict[str, Any]) -> None:
        """Take a ``notifications/tasks/status`` (the task's full state)."""

    async def relist(self) -> None:
        """List the tools and keep them; raises McpError."""

    async def events(self, items: list[tuple[str, dict[str, Any]]]) -> None:
        """Take ``event/*`` notifications as ``(method, params)``, in the order sent."""

    def resources_notice(self, method: str, params: dict[str, Any]) -> None:
        """Take ``resources/updated`` or ``resources/list_changed`` (subscriptions)."""

    def listen_notice(self, method: str, params: dict[str, Any]) -> None:
        """Take a listen stream's acknowledgement (2026-07-28)."""


class Inbound:
    """Server-initiated traffic for one :class:`~bothost.mcp.session.ClientSession`."""

    def __init__(
        self,
        owner: InboundOwner,
        *,
        name: str,
        log: logging.Logger,
        roots: list[dict[str, str]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.owner = owner
        self.name = name
        self.log = log
        self.roots = list(roots)  # fixed for the session's life (we announce no list_changed)
        self._tasks = TaskSet(self.log)
        self.client_tasks = client_tasks.ClientTasks(self.log)  # tasks run for the server
        self._handlers: dict[Any, asyncio.Future[Any]] = {}  # server request id -> its task
        self._requests = 0  # server requests being handled now
        self._queue: deque[tuple[str, dict[str, Any]]] = deque()  # event/* (method, params)
        self._sizes: deque[int] = deque()  # the bytes of each, in the same order
        self._queued_bytes = 0
        self._arrived = asyncio.Event()  # the worker's wake-up
        self._unhandled = 0  # queued or in the batch being handled (what close drains)
        self._drained = asyncio.Event()  # set while nothing is unhandled
        self._drained.set()
        self._room = asyncio.Event()  # set while the queue is below its high marks
        self._room.set()
        self._full = False  # not self._room.is_set(), as a plain field: asked per message
        self._closed = False
        self._worker: asyncio.Task | None = None
        self._relist: asyncio.Task | None = None
        self._next_listing: asyncio.Future[McpError | None] | None = None
        self._moved: set[asyncio.Future[McpError | None]] = set()  # listings a failed one went to
        self._last_listing = float("-inf")
        self._progress_busy: dict[Any, tuple[Any, Any, Any] | None] = {}
        self.dropped = Tally(self.log, clock)
        self._log_budget = Budget(LOG_RATE, LOG_BURST, clock)
        self.ignored = Tally(self.log, clock, logging.DEBUG)
        # resources and prompts are listed afresh whenever asked, so their list_changed has
        # nothing to refresh; it is said in the log (one line per kind at most every 10 s)
        self.changed = {
            kind: Tally(
                self.log, clock, logging.INFO, f"{kind} list changed (listed afresh when asked)"
            )
            for kind in LISTED_AFRESH
        }

    def spawn(self, awaitable: Awaitable[Any]) -> asyncio.Future[Any]:
        return self._tasks.spawn(awaitable)

    async def close(self) -> None:
        if self._worker is not None and not self._worker.done():
            try:  # events the server pushed just before the end must still be recorded
                async with asyncio.timeout(CLOSE_DRAIN):
                    await self._drained.wait()
            except TimeoutError:
                self.log.warning("%d notifications dropped at close", len(self._queue))
        self._closed = True
        self._room.set()  # a paused reader must not wait on a worker that is gone
        self._full = False
        tasks = [t for t in (*self._tasks, self._worker, self._relist) if t and not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.client_tasks.close()
        self._settle_listing(McpError(jsonrpc.CONNECTION_CLOSED, "session closed"))

    async def drain(self) -> None:
        """Wait until every event notification taken so far has been handled (committed to
        the queue): what a server's saved position may account for (bothost.mcp.handover).
        An item is done only once the batch it went in was handled, not when it was taken."""
        await self._drained.wait()

    # -- server requests ---------------------------------------------------------------

    def on_request(self, message: jsonrpc.Message, related: Any) -> None:
        if self._requests >= MAX_SERVER_REQUESTS:
            self.dropped.add(f"{message['method']} requests beyond {MAX_SERVER_REQUESTS} at once")
            return
        self._requests += 1
        task = self.spawn(self._answer(message, related))
        id_ = message["id"]
        if hashable(id_):
            self._handlers[id_] = task
        task.add_done_callback(lambda _t: self._request_done(id_, task))

    def _request_done(self, id_: Any, task: asyncio.Future[Any]) -> None:
        self._requests -= 1
        if hashable(id_) and self._handlers.get(id_) is task:
            del self._handlers[id_]

    async def _answer(self, message: jsonrpc.Message, related: Any) -> None:
        id_, method = message["id"], message["method"]
        params = jsonrpc.params_of(message)
        try:
            reply = jsonrpc.result(id_, await self._dispatch(method, params, related))
        except McpError as exc:
            reply = jsonrpc.error(id_, exc.code, exc.message, exc.data)
        except asyncio.CancelledError:
            raise
        except Exception:
            self.log.exception("handling server request %s failed", method)
            reply = jsonrpc.error(id_, jsonrpc.INTERNAL_ERROR, "client error")
        try:
            async with asyncio.timeout(ANSWER_TIMEOUT):
                await self.owner.send(reply)
        except TransportError as exc:
            self.log.warning("could not answer %s: %s", method, exc)
        except TimeoutError:
            self.dropped.add(
                f"answers to {method} the server did not read within {ANSWER_TIMEOUT:g} s"
            )

    async def _dispatch(self, method: str, params: dict[str, Any], related: Any) -> dict:
        if method in client_tasks.SERVED:
            return await self.client_tasks.serve(method, params)
        if client_tasks.augmented(method, params, self.owner.client_capabilities()):
            # answered at once; the same handling runs in the background as the task's work
            return self.client_tasks.create(
                method, params, lambda plain: self._handle(method, plain, related)
            )
        return await self._handle(method, params, related)

    async def _handle(self, method: str, params: dict[str, Any], related: Any) -> dict:
        if method == "ping":
            return {}
        if method == "roots/list":
            return {"roots": list(self.roots)}
        if method == "elicitation/create":
            task = taskcall.related_task(params)  # the spec has a task's questions name it
            ask = self.owner.asker_for(related, task)
            whose = self.owner.conversation_of(related, task)
            tell = whose.tell if whose is not None else None
            with self.owner.asking(related, task):  # a person's time is not the server's
                return await elicitation.answer(params, ask, self.name, self.log, tell)
        if method == "sampling/createMessage":
            task = taskcall.related_task(params)
            whose = self.owner.conversation_of(related, task)
            with self.owner.asking(related, task):  # an approval may wait for a person
                return await sampling.answer(params, self.owner.sample, whose, self.name)
        raise McpError(jsonrpc.METHOD_NOT_FOUND, f"method not found: {method:.100}")

    # -- notifications -----------------------------------------------------------------

    def on_notification(self, message: jsonrpc.Message, size: int = 0) -> None:
        method = message["method"]
        if method.startswith("event/"):  # first: a flood of events is the common case
            # an object (decoded JSON: a dict itself), or none at all (an empty event);
            # positional params (MCP has none) say nothing: dropped
            params = message.get("params", EMPTY)
            if type(params) is dict:
                if "_meta" in params:  # a listen stream's id, 2026-07-28: not the payload's
                    params = listen.unstamped(params)
                self._enqueue(method, params if params is not EMPTY else {}, size)
            else:
                self.dropped.add(f"{method[:100]} with params that are not an object")
            return
        params = jsonrpc.params_of(message)
        if method == "notifications/progress":
            self._progress(params)
        elif method == "notifications/cancelled":
            request_id = params.get("requestId")
            task = self._handlers.get(request_id) if hashable(request_id) else None
            if task is not None:
                task.cancel()
        elif method == "notifications/tools/list_changed":
            self._mark_tools_stale()
        elif method == "notifications/tasks/status":
            self.owner.task_status(params)  # replaces the task's state: a flood makes no work
        elif method == "notifications/message":
            if self._log_budget.take():
                serverlog.log_message(self.log, params)
            else:
                self.dropped.add(f"{method} beyond {LOG_RATE:.0f} a second")
        elif method == listen.ACKNOWLEDGED:
            self.owner.listen_notice(method, params)
        elif method == "notifications/elicitation/complete":
            elicitation.completed(params, self.name, self.log)
        elif method == "notifications/resources/updated":
            self.owner.resources_notice(method, params)  # coalesced per URI there
        elif method in LIST_CHANGED:
            kind = LIST_CHANGED[method]
            self.changed[kind].add("notification")
            if kind == "resources":  # subscribed globs are matched afresh
                self.owner.resources_notice(method, params)
        else:
            self.ignored.add(f"{method[:100]} (not used)")

    def _enqueue(self, method: str, params: dict[str, Any], size: int) -> None:
        if self._closed:
            return  # after the close drain: nobody would handle it
        count, queued_bytes = len(self._queue), self._queued_bytes
        if count >= DROP_COUNT or queued_bytes >= DROP_BYTES:
            self.dropped.add(f"{method[:100]} beyond the notification queue's bound")
            return
        self._queue.append((method, params))  # as the owner takes them: no copy per batch
        self._sizes.append(size)
        self._queued_bytes = queued_bytes = queued_bytes + size
        if not self._unhandled:
            self._drained.clear()
        self._unhandled += 1
        if not count:  # the worker waits only on an empty queue
            self._arrived.set()
            if self._worker is None:
                self._worker = asyncio.create_task(self._work(), name=f"mcp-notes-{self.name}")
        if count + 1 >= QUEUE_HIGH or queued_bytes >= QUEUE_HIGH_BYTES:
            self._room.clear()
            self._full = True

    def room(self) -> Awaitable[object] | None:
        """None while the notification queue is below its high marks, else what to await
        until it is (the readers' backpressure: they read no more until the worker has
        caught up); a plain check first, as the stdio reader asks after every message."""
        return self._room.wait() if self._full else None

    def _take(self) -> list[tuple[str, dict[str, Any]]]:
        """The next batch off the queue; the reader may go on while it is handled."""
        queue, sizes = self._queue, self._sizes
        if len(queue) <= EVENT_BATCH:  # the usual case: all of it, copied at C speed
            batch = list(queue)
            queue.clear()
            sizes.clear()
            self._queued_bytes = 0
        else:
            batch = [queue.popleft() for _ in range(EVENT_BATCH)]
            self._queued_bytes -= sum(sizes.popleft() for _ in range(EVENT_BATCH))
        if len(queue) < QUEUE_HIGH // 2 and self._queued_bytes < QUEUE_HIGH_BYTES // 2:
            self._room.set()
            self._full = False
        return batch

    def _handled(self, count: int) -> None:
        self._unhandled -= count
        if not self._unhandled:
            self._drained.set()

    def _progress(self, params: dict[str, Any]) -> None:
        token = params.get("progressToken")
        if not hashable(token):
            return
        self.owner.progressed(token)
        callback = self.owner.progress_for(token)
        if callback is None:
            return
        value = (params.get("progress"), params.get("total"), params.get("message"))
        if token in self._progress_busy:
            self._progress_busy[token] = value  # shown when the update in flight is done
            return
        self._show_progress(token, callback, value)

    def _show_progress(self, token: Any, callback: Any, value: tuple[Any, Any, Any]) -> None:
        try:
            shown = callback(*value)
        except Exception:  # boundary: the caller's callback
            self.log.exception("progress callback failed")
            return
        if inspect.isawaitable(shown):
            self._progress_busy[token] = None
            self.spawn(self._progress_done(token, callback, shown))

    async def _progress_done(self, token: Any, callback: Any, shown: Awaitable[Any]) -> None:
        try:
            async with asyncio.timeout(PROGRESS_TIMEOUT):
                await shown
        except TimeoutError:
            self.log.warning("showing progress took over %g s", PROGRESS_TIMEOUT)
        except Exception:  # boundary: the caller's callback
            self.log.exception("progress callback failed")
        finally:
            latest = self._progress_busy.pop(token, None)
        if latest is not None and self.owner.progress_for(token) is not None:
            self._show_progress(token, callback, latest)

    async def _work(self) -> None:
        while True:
            while not self._queue:
                self._arrived.clear()
                await self._arrived.wait()
            batch = self._take()
            try:
                await self.owner.events(batch)
            except Exception:  # boundary: one batch's handling must not stop the next
                self.log.exception("handling %d event notifications failed", len(batch))
            finally:
                self._handled(len(batch))

    # -- tools/list coalescing ---------------------------------------------------------

    @property
    def relisting(self) -> bool:
        return self._relist is not None and not self._relist.done()

    def _mark_tools_stale(self) -> asyncio.Future[McpError | None]:
        """Ask for a listing that starts after now; at most one runs and one waits."""
        if self._next_listing is None:
            self._next_listing = asyncio.get_running_loop().create_future()
        listing = self._next_listing
        if not self.relisting:
            self._relist = asyncio.create_task(self._relist_loop(), name=f"mcp-relist-{self.name}")
        return listing

    async def refresh_tools(self) -> None:
        """Wait for a listing that starts after now; raises McpError if it failed."""
        failure = await asyncio.shield(self._mark_tools_stale())
        if failure is not None:
            raise failure

    async def _relist_loop(self) -> None:
        while self._next_listing is not None:
            await asyncio.sleep(
                max(LIST_CHANGED_SETTLE, self._last_listing + RELIST_INTERVAL - time.monotonic())
            )
            listing, self._next_listing = self._next_listing, None
            self._last_listing = time.monotonic()
            try:
                await self.owner.relist()
            except McpError as exc:
                if self._list_moved(exc, listing):
                    continue
                self.log.warning("listing tools failed: %s", exc.message)
                listing.set_result(exc)
                continue
            except Exception as exc:  # boundary: a bug here must not end re-listing for good
                self.log.exception("listing tools failed")
                listing.set_result(McpError(jsonrpc.INTERNAL_ERROR, f"listing failed: {exc}"))
                continue
            except BaseException:
                listing.set_result(McpError(jsonrpc.CONNECTION_CLOSED, "listing stopped"))
                raise
            listing.set_result(None)

    def _list_moved(self, failure: McpError, listing: asyncio.Future[McpError | None]) -> bool:
        """Whether a listing that failed goes to the next one instead: the server refused
        its cursor (-32602, the spec's answer to an invalid cursor) after saying its list
        changed, so pages of two lists were being joined, and a listing of the new list is
        due already. Its waiters take that listing's outcome — once: a list that changes
        under every listing fails the next, rather than keeping them waiting."""
        following = self._next_listing
        if failure.code != jsonrpc.INVALID_PARAMS or following is None or listing in self._moved:
            return False
        self.log.info("the tool list changed while listed (%s); listing it again", failure.message)
        self._moved.add(following)

        def settle(done: asyncio.Future[McpError | None]) -> None:
            self._moved.discard(done)
            listing.set_result(done.result())

        following.add_done_callback(settle)
        return True

    def _settle_listing(self, failure: McpError) -> None:
        listing, self._next_listing = self._next_listing, None
        if listing is not None and not listing.done():
            listing.set_result(failure)
