"""The MCP protocol for one connected client, independent of the transport.

A transport hands every incoming JSON-RPC message to `Session.receive` together with a
*sink*: the coroutine that delivers this exchange's outgoing messages (stdout for stdio,
the POST's SSE stream over HTTP). Each request runs in its own task, so a slow tool never
blocks `ping`, and `notifications/cancelled` can cancel it. Unknown methods are answered
-32601 at once (a client probing a method we lack waits on silence). Requests *we* send
(elicitation) are correlated here by id.

Two lifecycles share it: a 2025-11-25 client's ``initialize`` sets the session's
:class:`~.modern.Peer` once; a 2026-07-28 request carries its own in ``params._meta`` and
is answered as that peer alone (:mod:`.modern`: ``server/discover``, listen streams).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .context import Context, RequestFailedError
from .modern import (
    ACKNOWLEDGED,
    EVENTS_CAPABILITY,
    HANDSHAKE_PROTOCOLS,
    STATELESS_PROTOCOLS,
    UNSUPPORTED_VERSION,
    Listener,
    Peer,
    peer_of,
    stamped,
    unsupported,
)
from .rounds import Asking, Rounds

if TYPE_CHECKING:
    from .server import Server

logger = logging.getLogger(__name__)

Sink = Callable[[dict[str, Any]], Awaitable[None]]

LATEST_PROTOCOL = HANDSHAKE_PROTOCOLS[0]  # what initialize answers an unknown revision with
SUPPORTED_PROTOCOLS = HANDSHAKE_PROTOCOLS
ALL_PROTOCOLS = (*STATELESS_PROTOCOLS, *HANDSHAKE_PROTOCOLS)
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
DEFAULT_LOG_LEVEL = "info"
# Large enough that a normal server lists every tool at once; a cursor beyond it.
TOOLS_PAGE_SIZE = 100
__all__ = ["EVENTS_CAPABILITY", "Session"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class ProtocolError(Exception):
    """A request that is answered with a JSON-RPC error instead of a result."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


class Session:
    """Protocol state of one client: negotiated version, capabilities, in-flight calls."""

    def __init__(self, server: Server, sink: Sink) -> None:
        self.server = server
        self.default_sink = sink
        self.peer = Peer(log_level=DEFAULT_LOG_LEVEL)  # what initialize declared
        self.initialized = asyncio.Event()
        self.listeners: list[Listener] = []  # open subscriptions/listen streams (2026-07-28)
        self.rounds = Rounds()  # 2026-07-28 calls waiting for the client's answer
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future[Any]] = {}
        self._running: dict[Any, asyncio.Task[None]] = {}
        # The event loop keeps only weak references to tasks; this keeps ours alive.
        self._tasks: set[asyncio.Task[None]] = set()
        self._methods: dict[str, Callable[..., Awaitable[Any]]] = {
            "initialize": self._initialize,
            "ping": self._ping,
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "logging/setLevel": self._set_level,
            "server/discover": self._discover,
            "subscriptions/listen": self._listen,
        }

    @property
    def protocol_version(self) -> str | None:
        return self.peer.protocol_version

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.peer.capabilities

    @property
    def log_level(self) -> str | None:
        return self.peer.log_level

    @property
    def supports_elicitation(self) -> bool:
        return self.peer.supports_elicitation

    @property
    def wants_events(self) -> bool:
        """Whether the client declared `EVENTS_CAPABILITY` at initialize (see `Peer`)."""
        return self.peer.wants_events

    @property
    def in_flight(self) -> list[asyncio.Task[None]]:
        return list(self._running.values())

    # incoming -----------------------------------------------------------------------

    def receive(self, message: Any, sink: Sink | None = None) -> asyncio.Task[None] | None:
        """Handle one decoded message; a request returns the task that will answer it."""
        sink = sink or self.default_sink
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._spawn(
                None, sink, self._reply_error(sink, None, INVALID_REQUEST, "not JSON-RPC 2.0")
            )
            return None
        method = message.get("method")
        if "id" in message and not _valid_id(message["id"]):
            error = self._reply_error(sink, None, INVALID_REQUEST, "id must be a string or number")
            return self._spawn(None, sink, error)
        if method is None and "id" in message:
            self._resolve(message)
            return None
        if not isinstance(method, str):
            error = self._reply_error(sink, message.get("id"), INVALID_REQUEST, "missing method")
            return self._spawn(None, sink, error)
        if "id" not in message:
            params = message.get("params")
            self._on_notification(method, params if isinstance(params, dict) else {})
            return None
        request_id = message["id"]
        answer = self._answer(request_id, method, message, sink)
        # `initialize` is never cancellable (MCP lifecycle rule), so it is not tracked.
        return self._spawn(None if method == "initialize" else request_id, sink, answer)

    def _spawn(self, request_id: Any, sink: Sink, coro: Awaitable[None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if request_id is not None:
            self._running[request_id] = task
            task.add_done_callback(lambda _t: self._running.pop(request_id, None))
        return task

    async def _answer(self, request_id: Any, method: str, message: dict[str, Any], sink: Sink):
        handler = self._methods.get(method)
        if handler is None:
            await self._reply_error(
                sink, request_id, METHOD_NOT_FOUND, f"Method not found: {method}"
            )
            return
        params = message.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            await self._reply_error(sink, request_id, INVALID_PARAMS, "params must be an object")
            return
        try:
            peer = self._peer(params)
            result = await handler(params, request_id=request_id, sink=sink, peer=peer)
        except ProtocolError as exc:
            await self._reply_error(sink, request_id, exc.code, str(exc), exc.data)
            return
        except asyncio.CancelledError:
            # A cancelled request gets no response (MCP cancellation rule).
            raise
        except Exception:  # boundary: a bug in one request must not end the session
            logger.exception("%s failed", method)
            await self._reply_error(sink, request_id, INTERNAL_ERROR, f"internal error in {method}")
            return
        if peer.stateless:
            result = stamped(result, self.server.info())
        await self._send(sink, {"jsonrpc": "2.0", "id": request_id, "result": result})

    def _peer(self, params: dict[str, Any]) -> Peer:
        """Who asks: the request's own 2026-07-28 client, else the session's."""
        peer = peer_of(params.get("_meta"), LOG_LEVELS)
        if peer is None or peer.protocol_version in HANDSHAKE_PROTOCOLS:
            return self.peer
        if not peer.stateless:
            version = str(peer.protocol_version)
            raise ProtocolError(
                UNSUPPORTED_VERSION,
                f"Unsupported protocol version {version[:40]}",
                unsupported(version),
            )
        return peer

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/initialized":
            self.initialized.set()
            self.server.session_ready(self)
        elif method == "notifications/cancelled":
            task = self._running.get(params.get("requestId"))
            if task is not None:
                logger.info(
                    "request %r cancelled: %s", params.get("requestId"), params.get("reason")
                )
                task.cancel()
        # Other notifications (roots/list_changed, progress…) need no action here.

    def _resolve(self, message: dict[str, Any]) -> None:
        future = self._pending.pop(message["id"], None)
        if future is None or future.done():
            logger.debug("response to unknown request %r ignored", message["id"])
        elif "error" in message:
            future.set_exception(RequestFailedError(message.get("error") or {}))
        else:
            future.set_result(message.get("result"))

    # methods ------------------------------------------------------------------------

    async def _initialize(self, params: dict[str, Any], **_: Any) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise ProtocolError(INVALID_PARAMS, "initialize needs a protocolVersion string")
        version = requested if requested in SUPPORTED_PROTOCOLS else LATEST_PROTOCOL
        capabilities = params.get("capabilities")
        client_info = params.get("clientInfo")
        self.peer = Peer(
            protocol_version=version,
            capabilities=capabilities if isinstance(capabilities, dict) else {},
            info=client_info if isinstance(client_info, dict) else {},
            log_level=self.peer.log_level,
        )
        return self.server.initialize_result(version)

    async def _discover(self, params: dict[str, Any], **_: Any) -> dict[str, Any]:
        return self.server.discover_result()

    async def _listen(self, params: dict[str, Any], request_id: Any, sink: Sink, peer: Peer):
        """One ``subscriptions/listen`` stream: acknowledged, then open until the client
        cancels it or the session ends (see :mod:`.modern`)."""
        if not peer.stateless:  # a 2025-11-25 session has its GET stream (or stdout) instead
            raise ProtocolError(METHOD_NOT_FOUND, "Method not found: subscriptions/listen")
        listener = Listener(request_id, sink, peer)
        ack = {"notifications": listener.honored(), "_meta": listener.meta}
        if not await self.notify(ACKNOWLEDGED, ack, sink=sink):
            return {"_meta": listener.meta}
        # taken only after the acknowledgement: nothing may reach the stream before it
        self.listeners.append(listener)
        self.server.session_ready(self)
        try:
            await listener.closed.wait()
        finally:
            if listener in self.listeners:
                self.listeners.remove(listener)
        return {"_meta": listener.meta}

    async def _ping(self, params: dict[str, Any], **_: Any) -> dict[str, Any]:
        return {}

    async def _tools_list(self, params: dict[str, Any], peer: Peer, **_: Any) -> dict[str, Any]:
        tools = [tool.definition() for tool in self.server.tools.values()]
        cursor = params.get("cursor")
        start = 0
        if cursor is not None:
            if not isinstance(cursor, str) or not cursor.isdigit() or int(cursor) > len(tools):
                raise ProtocolError(INVALID_PARAMS, f"invalid cursor {cursor!r}")
            start = int(cursor)
        end = start + TOOLS_PAGE_SIZE
        result: dict[str, Any] = {"tools": tools[start:end]}
        if end < len(tools):
            result["nextCursor"] = str(end)
        if peer.stateless:  # a cacheable result there: the list is fixed, but say nothing more
            result.update(ttlMs=0, cacheScope="private")
        return result

    async def _tools_call(
        self, params: dict[str, Any], request_id: Any, sink: Sink, peer: Peer
    ) -> Any:
        name = params.get("name")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise ProtocolError(INVALID_PARAMS, "tools/call needs a name and an arguments object")
        tool = self.server.tools.get(name)
        if tool is None:
            raise ProtocolError(INVALID_PARAMS, f"Unknown tool: {name}")
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if not peer.stateless:
            return await tool.call(arguments, Context(self, request_id, token, sink, peer))
        if "requestState" in params:  # a follow-up: the parked call goes on (.rounds)
            state, answers = params["requestState"], params.get("inputResponses")
            try:
                return await self.rounds.resume(state, answers)
            except KeyError:
                raise ProtocolError(INVALID_PARAMS, "requestState names no call") from None

        def run(asking: Asking) -> Awaitable[Any]:
            return tool.call(arguments, Context(self, request_id, token, sink, peer, asking))

        return await self.rounds.start(run)

    async def _set_level(self, params: dict[str, Any], peer: Peer, **_: Any) -> dict[str, Any]:
        if peer.stateless:  # 2026-07-28 asks for a level per request (logLevel in _meta)
            raise ProtocolError(METHOD_NOT_FOUND, "Method not found: logging/setLevel")
        level = params.get("level")
        if level not in LOG_LEVELS:
            raise ProtocolError(INVALID_PARAMS, f"level must be one of {', '.join(LOG_LEVELS)}")
        self.peer.log_level = level
        return {}

    # outgoing -----------------------------------------------------------------------

    async def notify(self, method: str, params: dict[str, Any], sink: Sink | None = None) -> bool:
        """Send a notification; False when the transport could not carry it to the client."""
        return await self._send(
            sink or self.default_sink, {"jsonrpc": "2.0", "method": method, "params": params}
        )

    async def notify_listeners(self, method: str, params: dict[str, Any]) -> int:
        """Send a notification on each listen stream that asked for it; how many got it.
        A stream that cannot be written to any more is ended (its client is gone)."""
        got = 0
        for listener in tuple(self.listeners):
            if listener.takes(method):
                meta = params.get("_meta")
                meta = meta if isinstance(meta, dict) else {}
                stamped_params = {**params, "_meta": {**meta, **listener.meta}}
                if await self.notify(method, stamped_params, sink=listener.sink):
                    got += 1
                else:
                    listener.closed.set()
        return got

    async def log(
        self,
        level: str,
        message: Any,
        logger_name: str | None = None,
        sink: Sink | None = None,
        peer: Peer | None = None,
    ) -> None:
        """`notifications/message` at the level `peer` (the request's client, else the
        session's) asked for; a 2026-07-28 request that asked for none gets none."""
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}")
        wanted = (peer or self.peer).log_level
        if wanted is None or LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted):
            return
        params: dict[str, Any] = {"level": level, "data": message}
        if logger_name:
            params["logger"] = logger_name
        await self.notify("notifications/message", params, sink=sink)

    async def request(
        self, method: str, params: dict[str, Any], *, timeout: float, sink: Sink | None = None
    ) -> Any:
        """Send a request to the client and wait (bounded) for its result."""
        sink = sink or self.default_sink
        request_id = f"srv-{next(self._ids)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            # Straight to the sink: a transport that cannot carry requests raises ConnectionError.
            await sink({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            async with asyncio.timeout(timeout):
                return await future
        except TimeoutError:
            await self.notify(
                "notifications/cancelled",
                {"requestId": request_id, "reason": "timed out"},
                sink=sink,
            )
            raise
        finally:
            self._pending.pop(request_id, None)

    def close(self) -> None:
        """Cancel every running request (listen streams too) and wake every pending one."""
        for listener in self.listeners:
            listener.closed.set()
        for job, _ in list(self.rounds.parked.values()):
            job.cancel()
        for task in list(self._running.values()):
            task.cancel()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(
                    RequestFailedError({"code": -32000, "message": "session closed"})
                )
        self._pending.clear()

    async def _reply_error(
        self, sink: Sink, request_id: Any, code: int, message: str, data: Any = None
    ) -> None:
        body: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            body["data"] = data
        await self._send(sink, {"jsonrpc": "2.0", "id": request_id, "error": body})

    async def _send(self, sink: Sink, message: dict[str, Any]) -> bool:
        try:
            await sink(message)
        except ConnectionError as exc:
            # The client went away (or, over HTTP, opened no stream for what we push): what
            # it cannot read is not our failure, but it is not delivered either.
            logger.debug(
                "could not deliver %s: %s", message.get("method") or message.get("id"), exc
            )
            return False
        return True


def _valid_id(value: Any) -> bool:
    """JSON-RPC ids are strings or numbers (null only in error replies we send)."""
    return isinstance(value, str | int | float) and not isinstance(value, bool)
