"""What a server sends unasked: its requests to the client and its notifications.

Server requests each run in their own task (an elicitation may wait minutes for a person)
and are answered by id: ``ping``, ``roots/list``, ``elicitation/create`` (routed to an
``ask`` callback, see :mod:`bothost.mcp.elicitation`); anything else gets -32601 at once.
Notifications are handled in arrival order by one worker, so ``event/*`` reach the host in
the order the server sent them; progress goes straight to the waiting call's callback.
``notifications/tools/list_changed`` bursts (server-everything sends five right after
initialize) collapse into as few ``tools/list`` rounds as possible.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from bothost.mcp import elicitation, jsonrpc, serverlog
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.tasks import TaskSet
from bothost.mcp.transport import TransportError

if TYPE_CHECKING:
    from bothost.mcp.session import ClientSession

CLOSE_DRAIN = 2.0  # on a graceful close, queued notifications (events!) get this long
LIST_CHANGED_SETTLE = 0.05  # wait this long after list_changed so a burst becomes one listing
MAX_QUEUED_NOTIFICATIONS = 10_000  # beyond this a flooding server's notifications are dropped
MAX_EVENTS_IN_FLIGHT = 512  # events handed to the queue but not yet committed, per server


async def await_maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class Inbound:
    """Server-initiated traffic for one :class:`ClientSession`."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.log = session.log
        self._tasks = TaskSet(self.log)
        self._events_in_flight = asyncio.Semaphore(MAX_EVENTS_IN_FLIGHT)
        self._handlers: dict[Any, asyncio.Future[Any]] = {}  # server request id -> its task
        self._queue: asyncio.Queue[jsonrpc.Message] = asyncio.Queue(MAX_QUEUED_NOTIFICATIONS)
        self._worker: asyncio.Task | None = None
        self._relist: asyncio.Task | None = None
        self._tools_dirty = False

    def spawn(self, awaitable: Awaitable[Any]) -> asyncio.Future[Any]:
        return self._tasks.spawn(awaitable)

    async def close(self) -> None:
        if self._worker is not None and not self._worker.done():
            try:  # events the server pushed just before the end must still be recorded
                async with asyncio.timeout(CLOSE_DRAIN):
                    await self._queue.join()
            except TimeoutError:
                self.log.warning("%d notifications dropped at close", self._queue.qsize())
        tasks = [t for t in (*self._tasks, self._worker, self._relist) if t and not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- server requests ---------------------------------------------------------------

    def on_request(self, message: jsonrpc.Message, related: Any) -> None:
        task = self.spawn(self._answer(message, related))
        self._handlers[message["id"]] = task
        task.add_done_callback(lambda _t: self._handlers.pop(message["id"], None))

    async def _answer(self, message: jsonrpc.Message, related: Any) -> None:
        id_, method = message["id"], message["method"]
        params = message.get("params") or {}
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
            await self.session.transport.send(reply)
        except TransportError as exc:
            self.log.warning("could not answer %s: %s", method, exc)

    async def _dispatch(self, method: str, params: dict[str, Any], related: Any) -> dict:
        if method == "ping":
            return {}
        if method == "roots/list":
            return {"roots": list(self.session.roots)}
        if method == "elicitation/create":
            ask = self._ask_for(related)
            return await elicitation.answer(params, ask, self.session.name, self.log)
        raise McpError(jsonrpc.METHOD_NOT_FOUND, f"method not found: {method}")

    def _ask_for(self, related: Any) -> Any:
        """Who answers an elicitation: the call it belongs to, else the session's default.

        Over HTTP the server asks on the POST stream of the call that caused it; over stdio
        a lone call in flight that brought its own ``ask`` is the evident origin.
        """
        pending = self.session.pending
        if related is not None and related in pending and pending[related].ask is not None:
            return pending[related].ask
        asking = [p.ask for p in pending.values() if p.ask is not None]
        if len(set(asking)) == 1:  # one call, or calls of one conversation
            return asking[0]
        return self.session.ask

    # -- notifications -----------------------------------------------------------------

    def on_notification(self, message: jsonrpc.Message) -> None:
        method = message["method"]
        params = message.get("params") or {}
        if method == "notifications/progress":
            self._progress(params)
            return
        if method == "notifications/cancelled":
            task = self._handlers.get(params.get("requestId"))
            if task is not None:
                task.cancel()
            return
        try:
            self._queue.put_nowait(message)
        except asyncio.QueueFull:
            self.log.error("dropped %s: more than %d notifications queued", method,
                           MAX_QUEUED_NOTIFICATIONS)
            return
        if self._worker is None:
            self._worker = asyncio.create_task(self._work(), name=f"mcp-notes-{self.session.name}")

    def _progress(self, params: dict[str, Any]) -> None:
        token = params.get("progressToken")
        pending = self.session.pending.get(token)
        if pending is None or pending.on_progress is None:
            return
        try:
            value = pending.on_progress(params.get("progress"), params.get("total"),
                                        params.get("message"))
            if inspect.isawaitable(value):
                self.spawn(value)
        except Exception:
            self.log.exception("progress callback failed")

    async def _work(self) -> None:
        while True:
            message = await self._queue.get()
            if message["method"].startswith("event/"):
                # events are independent: queue the next while this one's commit is pending,
                # so a burst lands in a few group commits; bounded, so a flood backs up here
                await self._events_in_flight.acquire()
                self.spawn(self._event(message))
                continue
            try:
                await self._notification(message["method"], message.get("params") or {})
            except asyncio.CancelledError:
                raise
            except Exception:
                self.log.exception("handling %s failed", message["method"])
            finally:
                self._queue.task_done()

    async def _event(self, message: jsonrpc.Message) -> None:
        try:
            await self._notification(message["method"], message.get("params") or {})
        except Exception:
            self.log.exception("handling %s failed", message["method"])
        finally:
            self._events_in_flight.release()
            self._queue.task_done()

    async def _notification(self, method: str, params: dict[str, Any]) -> None:
        session = self.session
        if method == "notifications/tools/list_changed":
            self.spawn(self._refresh_logged())
        elif method == "notifications/message":
            serverlog.log_message(self.log, params)
        elif method.startswith("event/"):
            if session.on_event is not None:
                await await_maybe(session.on_event(session.name, method, params))
        else:
            self.log.debug("notification %s ignored", method)

    # -- tools/list coalescing ---------------------------------------------------------

    @property
    def relisting(self) -> bool:
        return self._relist is not None and not self._relist.done()

    async def refresh_tools(self) -> list[dict[str, Any]]:
        self._tools_dirty = True
        if self._relist is None or self._relist.done():
            self._relist = asyncio.create_task(self._relist_loop())
        await asyncio.shield(self._relist)
        return self.session.tools

    async def _refresh_logged(self) -> None:
        try:
            await self.refresh_tools()
        except McpError as exc:
            self.log.warning("re-listing tools after list_changed failed: %s", exc.message)

    async def _relist_loop(self) -> None:
        session = self.session
        while self._tools_dirty:
            await asyncio.sleep(LIST_CHANGED_SETTLE)
            self._tools_dirty = False
            session.tools = await session.list_tools()
            if session.on_tools_changed is not None:
                try:
                    await await_maybe(session.on_tools_changed(session.tools))
                except Exception:
                    self.log.exception("tools-changed listener failed")
