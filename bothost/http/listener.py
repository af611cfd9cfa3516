"""The HTTP listener's defence against clients that hold connections open or
send without end.

A client can open connections and never finish a request: no bytes, half a header, or a
body that stops. Left alone, each holds a file descriptor until the process runs out and
``accept()`` fails for everyone, ``/healthz`` and webhook senders included. The parts:

* **Header deadline.** A new connection that has not completed its first request's
  headers within :data:`HEADER_TIMEOUT` is closed, however slowly it trickles bytes. After
  an answer, aiohttp's keep-alive timeout (:data:`KEEPALIVE_TIMEOUT`, counted from the
  answer and not reset by trickled bytes) bounds the wait for the next request's headers.
* **Body deadline.** :meth:`ConnectionGuard.middleware` arms a timer when a request with a
  body reaches its handler; a body still incomplete when it fires fails the handler's read
  with :class:`BodyTimeoutError`, answered 408, and the connection is closed.
* **Unread bodies.** An answer sent while more than :data:`LINGER_BYTES` of its request's
  body have yet to arrive (a 413 said from ``Content-Length``, a refusal before reading)
  closes the connection and reads no more of it: aiohttp would read and drop the rest for
  10 s to keep the connection, which a fast sender makes gigabytes.
* **Send deadline.** A connection whose client takes none of our answer's bytes for
  :data:`SEND_TIMEOUT` (its writes paused at two sweeps, and not a byte gone from its send
  buffer between them: pipelined requests never read, a stream nobody reads) is aborted, so
  it keeps no descriptor and no buffers. What was taken is counted (bytes written less
  bytes unsent, :class:`CountingTransport`), not read off the unsent count alone: a slow
  reader of a stream written to as it reads can leave that count the same at two sweeps.
* **Connection cap.** The listener's protocol factory counts open connections. At the cap
  a new connection evicts the oldest one that never completed a request (silent or
  mid-header), else the oldest whose client is not reading its answers (the host's writes
  to it are paused: a full send buffer, e.g. pipelined requests never read), else the
  oldest whose body is still arriving, else the oldest idle keep-alive one, else the
  oldest stream (a handler that has begun its answer and runs on: a page's event stream
  reconnects by itself); when every connection is busy with a complete request, reads
  what it is sent and has no answer begun, the newcomer gets a 503 and is closed at once.
  The cap is taken from the open-file limit, leaving room for the store, logs and MCP
  servers, so accepting does not run the process out of descriptors.

Accept errors that still happen (other parts of the process used the descriptors) are
logged as one line per :data:`ACCEPT_LOG_INTERVAL` with a count, never a traceback each.
Requests aiohttp cannot parse (a header line over 8 KiB, a bad ``Content-Length``) are
answered 400 by aiohttp and logged by :class:`BadRequests`: one warning line per
:data:`BAD_REQUEST_LOG_INTERVAL`, with a count, never a traceback each.

Every answer the listener makes without a handler (that 400, aiohttp's 500 and 504, the
503 at the cap) carries the headers plugins declared for every answer
(:func:`bothost.api.answer_headers`: the web plugin's security headers), as the
application's answers do: :class:`ListenerHandler` adds them to aiohttp's error answers.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestHandler

logger = logging.getLogger(__name__)

HEADER_TIMEOUT = 10.0  # seconds for a new connection to send its first request's headers
# an idle served connection is kept this long: longer than clients keep theirs (aiohttp 15 s,
# browsers ~60 s), or a client's reused connection closes under it; nginx's default too
KEEPALIVE_TIMEOUT = 75.0
BODY_TIMEOUT = 30.0  # seconds for a body after its headers: 1 MB of webhook at ~35 kB/s
# seconds a client may take none of what we send (nginx's send_timeout is 60 s); checked
# every SEND_TIMEOUT, so one is cut between one and two of them after it stopped reading
# (a client that takes a byte in an interval is kept: a slow reader is still a reader)
SEND_TIMEOUT = 60.0
MAX_CONNECTIONS = 2048  # far beyond one person's browsers, Slack and webhook senders together
MIN_CONNECTIONS = 32  # even a tiny open-file limit serves a page, its stream and a webhook
# Half the open-file limit stays for the rest of the process (store, logs, MCP pipes,
# outbound HTTP) and for accepts in flight: asyncio accepts up to BACKLOG connections per
# wake-up before the factory sees any of them, and an evicted socket closes a loop pass later.
FD_RESERVE_SHARE = 2
MIN_FD_RESERVE = 2 * 128 + 64  # two bursts of BACKLOG and the process's own descriptors
# the rest of a body answered early that is still read and dropped, so its sender gets the
# answer and keeps the connection; a larger rest closes it (reading would cost more)
LINGER_BYTES = 64 * 1024
BACKLOG = 128  # the kernel's queue and asyncio's accepts per wake-up (aiohttp's default)
ACCEPT_LOG_INTERVAL = 60.0  # seconds between the lines that count failed accepts
BAD_REQUEST_LOG_INTERVAL = 60.0  # seconds between the lines that count unparsable requests

REFUSAL_TEXT = b"too many open connections; try again"


def refusal(headers: dict[str, str]) -> bytes:
    """The whole 503 a connection over the cap gets, with ``headers`` (every answer's)."""
    fields = {
        "Retry-After": "1",  # a second: an event stream or a slow body ends meanwhile
        "Connection": "close",
        "Content-Type": "text/plain; charset=utf-8",
        "Content-Length": str(len(REFUSAL_TEXT)),
        **headers,
    }
    head = "".join(f"{name}: {value}\r\n" for name, value in fields.items())
    return f"HTTP/1.1 503 Service Unavailable\r\n{head}\r\n".encode("latin-1") + REFUSAL_TEXT


class BodyRefusedError(TimeoutError):
    """The rest of a body answered before it arrived is not read (a TimeoutError, so
    aiohttp's lingering read after the answer stops at once)."""


class BodyTimeoutError(TimeoutError):
    """A request body did not arrive in time (a TimeoutError, so aiohttp's lingering read
    after the answer treats it as the end of that body)."""


def connection_cap(soft_limit: int | None = None) -> int:
    """How many connections the listener keeps open, given the soft open-file limit."""
    if soft_limit is None:
        soft_limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft_limit == resource.RLIM_INFINITY or soft_limit <= 0:
        return MAX_CONNECTIONS
    reserve = max(MIN_FD_RESERVE, soft_limit // FD_RESERVE_SHARE)
    return max(MIN_CONNECTIONS, min(MAX_CONNECTIONS, soft_limit - reserve))


class Refusal(asyncio.Protocol):
    """A connection over the cap: a 503 and closed at once, so its descriptor is free."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        transport.write(self.answer)
        transport.close()


class ListenerHandler(RequestHandler):
    """aiohttp's connection handler, whose own error answers carry every answer's headers.

    aiohttp answers a request its parser refused (400), a handler's escaped exception (500)
    and timeout (504) from :meth:`handle_error`, past the application and its
    ``on_response_prepare``: plain text with none of the headers the application's answers
    get. Made by :meth:`ConnectionGuard.factory`, with the options the server was given.
    """

    __slots__ = ("answer_headers",)

    def __init__(self, manager: web.Server, answer_headers: dict[str, str], **kwargs: Any):
        super().__init__(manager, **kwargs)
        self.answer_headers = answer_headers

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        # aiohttp's writers write to ``self.transport``: counted, for the send deadline
        self.transport = CountingTransport(transport)  # type: ignore[assignment]

    async def finish_response(
        self, request: web.BaseRequest, resp: web.StreamResponse, start_time: float | None
    ) -> tuple[web.StreamResponse, bool]:
        """Send ``resp``; when much of the body has yet to arrive (a 413, a refusal before
        reading), with ``Connection: close`` and nothing more of the body read. aiohttp would
        read and drop it for 10 s to keep the connection: gigabytes, at a fast sender's pace."""
        if unread_past(request, LINGER_BYTES):
            resp.force_close()
            request.content.set_exception(BodyRefusedError("answered before the body"))
        return await super().finish_response(request, resp, start_time)

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        response = super().handle_error(request, status, exc, message)
        for name, value in self.answer_headers.items():
            response.headers.setdefault(name, value)
        return response


class CountingTransport:
    """A connection's transport that counts the bytes handed to it (:attr:`written`), and
    is otherwise the transport itself. Written less still unsent is what the client has
    taken: asyncio's transports count neither, and a slow reader's unsent count can be the
    same at two looks while it takes bytes all along (the stream writes on meanwhile)."""

    def __init__(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.written = 0

    def write(self, data: Any) -> None:
        self.written += memoryview(data).nbytes
        self.transport.write(data)  # type: ignore[attr-defined]

    def writelines(self, chunks: Any) -> None:
        chunks = list(chunks)
        self.written += sum(memoryview(chunk).nbytes for chunk in chunks)
        self.transport.writelines(chunks)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


def bytes_taken(transport: Any) -> int:
    """How many of the bytes written to ``transport`` have left its send buffer."""
    return int(getattr(transport, "written", 0)) - transport.get_write_buffer_size()


def unread_past(request: web.BaseRequest, limit: int) -> bool:
    """Whether more than ``limit`` bytes of the request's body have yet to arrive (a chunked
    body still arriving: its size is not known, so yes)."""
    content = request.content
    if content.is_eof():
        return False
    length = request.content_length
    return length is None or length - content.total_bytes > limit


class ConnectionGuard:
    """The cap, the eviction order and the body deadline for one aiohttp server."""

    def __init__(
        self,
        cap: int | None = None,
        body_timeout: float = BODY_TIMEOUT,
        header_timeout: float = HEADER_TIMEOUT,
        send_timeout: float = SEND_TIMEOUT,
    ) -> None:
        self.cap = connection_cap() if cap is None else cap
        self.body_timeout = body_timeout
        self.header_timeout = header_timeout
        self.send_timeout = send_timeout
        # connections whose writes were paused at the last sweep: the bytes they had taken
        self.taken: dict[RequestHandler, int] = {}
        self.sweeping: asyncio.TimerHandle | None = None
        self.server: web.Server | None = None
        self.busy: dict[RequestHandler, web.BaseRequest] = {}  # connections inside a handler
        # handlers do not take weak references: both sets are pruned to the open connections
        self.served: set[RequestHandler] = set()  # had a request in a handler
        self.evicted: set[RequestHandler] = set()  # closed by us, not yet gone
        self.counts = {
            "evicted_idle": 0,
            "evicted_body": 0,
            "evicted_keepalive": 0,
            "evicted_stalled": 0,
            "evicted_stream": 0,
            "refused": 0,
            "header_timeout": 0,
            "body_timeout": 0,
            "send_timeout": 0,
            "bad_request": 0,
        }
        self.bad_requests = BadRequests(self.counts)
        self.answer_headers: dict[str, str] = {}  # every answer's (see :meth:`attach`)
        self.refusal = refusal({})

    def handler_options(self) -> dict[str, Any]:
        """What the aiohttp server's connection handlers are made with (give the same to
        the app's runner): the keep-alive deadline, no access log, :class:`BadRequests`."""
        # aiohttp's keep-alive timeout runs from the last answer until a complete request:
        # the deadline for a served client's next headers (the guard times the first ones)
        return {
            "keepalive_timeout": KEEPALIVE_TIMEOUT,
            "access_log": None,
            "logger": self.bad_requests,  # a request it cannot parse: no traceback each
        }

    def attach(self, server: web.Server, answer_headers: dict[str, str] | None = None) -> None:
        """Serve connections for ``server``; ``answer_headers`` go on the listener's own
        answers (aiohttp's error answers, the 503 at the cap)."""
        self.server = server
        self.answer_headers = dict(answer_headers or {})
        self.refusal = refusal(self.answer_headers)

    def factory(self) -> asyncio.BaseProtocol:
        """The listener's protocol factory: aiohttp's handler, or a refusal at the cap."""
        assert self.server is not None, "attach() the aiohttp server first"
        if self.open_count() >= self.cap and not self.make_room():
            self.counts["refused"] += 1
            return Refusal(self.refusal)
        handler = ListenerHandler(
            self.server,
            self.answer_headers,
            loop=asyncio.get_running_loop(),
            **self.handler_options(),
        )
        loop = asyncio.get_running_loop()
        loop.call_later(self.header_timeout, self.header_late, handler)
        if self.sweeping is None:
            self.sweeping = loop.call_later(self.send_timeout, self.sweep)
        return handler

    def sweep(self) -> None:
        """Abort each connection whose client took nothing since the last sweep; again in
        :attr:`send_timeout` while any connection is open (the factory starts it anew)."""
        self.sweeping = None
        live = self.live()
        taken: dict[RequestHandler, int] = {}
        for handler in live:
            transport = handler.transport
            if transport is None or not not_reading(handler):
                continue
            so_far = bytes_taken(transport)
            if self.taken.get(handler) == so_far:  # not a byte taken in a whole interval
                abort(handler)
                self.evict(handler, "send_timeout")
            else:
                taken[handler] = so_far
        self.taken = taken
        if live:
            self.sweeping = asyncio.get_running_loop().call_later(self.send_timeout, self.sweep)

    def close(self) -> None:
        """Stop the send deadline's sweeps (the listener stops)."""
        if self.sweeping is not None:
            self.sweeping.cancel()
            self.sweeping = None

    def header_late(self, handler: RequestHandler) -> None:
        """Close a connection that has not completed its first request's headers."""
        assert self.server is not None
        if (
            handler in self.served
            or handler in self.busy
            or handler in self.evicted
            or request_waiting(handler)
            or handler not in self.server.connections
        ):
            return
        self.evict(handler, "header_timeout")

    def open_count(self) -> int:
        """Open connections not already evicted (a burst's newest may not be counted yet:
        aiohttp registers a connection a loop pass after the factory made it)."""
        assert self.server is not None
        return len(self.live())

    def live(self) -> list[RequestHandler]:
        assert self.server is not None
        connections = self.server.connections
        current = set(connections)
        self.evicted &= current
        self.served &= current
        return [h for h in connections if h not in self.evicted]

    def make_room(self) -> bool:
        """Close one connection that is not serving a complete request; False if none.

        Oldest first (the server keeps connections in the order they came): one that has
        never completed a request, then one whose client does not read what it is sent,
        then one whose body is still arriving, then an idle keep-alive connection of a
        client that was served (it reconnects at no loss). A connection whose request is
        parsed but not yet in a handler counts as busy.
        """
        live = self.live()
        idle = [h for h in live if h not in self.busy and not request_waiting(h)]
        for handler in idle:
            if handler not in self.served:
                return self.evict(handler, "evicted_idle")
        for handler in live:
            if not_reading(handler):
                abort(handler)
                return self.evict(handler, "evicted_stalled")
        for handler in live:
            request = self.busy.get(handler)
            if request is not None and not request.content.is_eof():
                self.evicted.add(handler)
                request.content.set_exception(
                    BodyTimeoutError(
                        "the connection was closed to make room while its body was arriving"
                    )
                )
                self.counts["evicted_body"] += 1
                return True
        if idle:
            return self.evict(idle[0], "evicted_keepalive")
        for handler in live:
            request = self.busy.get(handler)
            if request is not None and streaming(request):
                return self.evict(handler, "evicted_stream")
        return False

    def evict(self, handler: RequestHandler, reason: str) -> bool:
        self.evicted.add(handler)
        handler.force_close()
        self.counts[reason] += 1
        return True

    @web.middleware
    async def middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """Mark the connection busy; fail a body that is late; answer that 408."""
        timer = self.enter(request)
        try:
            return await handler(request)
        except BodyTimeoutError as exc:
            return self.late(exc)
        finally:
            self.leave(request, timer)

    def enter(self, request: web.BaseRequest) -> asyncio.TimerHandle | None:
        """A handler starts on ``request``: its connection is busy, and a body still arriving
        gets :attr:`body_timeout` (the timer returned, for :meth:`leave`)."""
        protocol = request.protocol
        self.busy[protocol] = request
        self.served.add(protocol)
        if request.body_exists and not request.content.is_eof():
            return asyncio.get_running_loop().call_later(self.body_timeout, self.body_late, request)
        return None  # the whole body came with the headers (a small webhook's does)

    def leave(self, request: web.BaseRequest, timer: asyncio.TimerHandle | None) -> None:
        """The handler of ``request`` has finished (after :meth:`enter`)."""
        if timer is not None:
            timer.cancel()
        protocol = request.protocol
        if self.busy.get(protocol) is request:
            del self.busy[protocol]

    def late(self, exc: BodyTimeoutError) -> web.Response:
        """The 408 for a body that did not arrive in time; the connection is closed after."""
        self.counts["body_timeout"] += 1
        response = web.json_response({"error": str(exc)}, status=408)
        response.force_close()
        return response

    def body_late(self, request: web.BaseRequest) -> None:
        if not request.content.is_eof():
            request.content.set_exception(
                BodyTimeoutError(f"the request body did not arrive within {self.body_timeout:g} s")
            )


class Throttle:
    """One log line per ``interval`` for something any client or a full disk can repeat
    without end: :meth:`due` is called at each occurrence and says whether to log this one,
    and how many went unlogged before it (the first is logged at once)."""

    def __init__(self, interval: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval, self.clock = interval, clock
        self.next_line = float("-inf")
        self.unlogged = 0  # occurrences since the last line

    def due(self) -> int | None:
        """None: counted, not to be logged; else log it now, with this many unlogged before."""
        now = self.clock()
        if now < self.next_line:
            self.unlogged += 1
            return None
        unlogged, self.unlogged, self.next_line = self.unlogged, 0, now + self.interval
        return unlogged


class BadRequests(logging.LoggerAdapter):
    """The aiohttp server's logger (its ``logger=``): a request it cannot parse is one
    warning line per interval, with a count, instead of an ERROR with a traceback each.

    aiohttp answers such a request 400 itself and logs ``Error handling request`` with the
    parser's exception; that is the client's mistake, and one any client can repeat to
    fill the log. Everything else is passed on to ``aiohttp.server`` unchanged.
    """

    def __init__(
        self,
        counts: dict[str, int],
        clock: Callable[[], float] = time.monotonic,
        interval: float = BAD_REQUEST_LOG_INTERVAL,
    ) -> None:
        super().__init__(logging.getLogger("aiohttp.server"), {})
        self.counts, self.interval = counts, interval
        self.throttle = Throttle(interval, clock)

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info")
        if not isinstance(exc, HttpProcessingError):
            super().log(level, msg, *args, **kwargs)
            return
        self.counts["bad_request"] += 1
        unlogged = self.throttle.due()
        if unlogged is None:
            return
        remote = args[0] if args else "?"
        reason = " ".join(str(exc.message).split())[:160]  # the parser's text: one line
        more = f" ({unlogged} more since the last line)" if unlogged else ""
        logger.warning(
            "HTTP listener: malformed HTTP request from %s answered 400: %s%s; further ones "
            "are counted and logged every %g s",
            remote,
            reason,
            more,
            self.interval,
        )


def streaming(request: web.BaseRequest) -> bool:
    """Whether a handler still running has begun its answer: a stream (a page's events, a
    chat reply as it is written), whose client reconnects or reads the stored result, not
    a request waiting for its one answer (a webhook being queued)."""
    return bool(getattr(request.writer, "output_size", 0))


def abort(handler: RequestHandler) -> None:
    """Drop a connection at once: a close waits for the unsent answers to go out, which a
    client that does not read never lets happen, and would keep the descriptor."""
    transport = handler.transport
    if transport is not None:
        transport.abort()


def not_reading(handler: RequestHandler) -> bool:
    """Whether the host's writes to this connection are paused: its send buffer is over the
    high-water mark because the client does not read (aiohttp's flow control; without the
    attribute, in a later aiohttp, no connection is judged so)."""
    return bool(getattr(handler, "writing_paused", False))


def request_waiting(handler: RequestHandler) -> bool:
    """Whether aiohttp has parsed a request on this connection that no handler runs yet.

    In a burst, a client's complete request can wait a few loop passes between parsing and
    its handler; evicting it then would drop a good request for a stalled one. aiohttp
    keeps parsed requests in ``_messages``; without it (a later aiohttp), the connection
    is judged by its handler alone.
    """
    return bool(getattr(handler, "_messages", None))


class AcceptErrors:
    """A loop exception handler that counts failed accepts instead of logging each.

    asyncio reports every failed ``accept()`` (and, on Python 3.11, up to a backlog's worth
    per wake-up, each with a traceback) to the loop's exception handler; everything else
    goes on to the handler that was installed before.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        status: Any = None,
        interval: float = ACCEPT_LOG_INTERVAL,
    ) -> None:
        self.loop, self.status, self.interval = loop, status, interval
        self.previous = loop.get_exception_handler()
        self.count = 0
        self.last_error = "unknown error"
        self.flush_handle: asyncio.TimerHandle | None = None

    @classmethod
    def install(
        cls,
        loop: asyncio.AbstractEventLoop,
        status: Any = None,
        interval: float = ACCEPT_LOG_INTERVAL,
    ) -> AcceptErrors:
        """Install on ``loop`` once; a second host on the same loop shares the first."""
        owner = getattr(loop.get_exception_handler(), "__self__", None)
        if isinstance(owner, cls):
            owner.status = status or owner.status
            return owner
        errors = cls(loop, status, interval)
        loop.set_exception_handler(errors.handle)
        return errors

    def handle(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        kind = accept_failure(context)
        if kind is not None:
            self.record(context.get("exception") if kind == "accept" else None)
            return
        if self.previous is not None:
            self.previous(loop, context)
        else:
            loop.default_exception_handler(context)

    def record(self, exc: BaseException | None) -> None:
        self.count += 1
        if exc is not None:
            self.last_error = str(exc)
        if self.flush_handle is None:  # the first of a run is logged at once
            where = f" ({self.status()})" if self.status is not None else ""
            logger.error(
                "HTTP listener: accept failed: %s%s; further failures are counted "
                "and logged every %g s",
                self.last_error,
                where,
                self.interval,
            )
            self.count = 0
            self.flush_handle = self.loop.call_later(self.interval, self.flush)

    def flush(self) -> None:
        self.flush_handle = None
        if not self.count:
            return  # the run is over; the next failure is logged at once again
        where = f" ({self.status()})" if self.status is not None else ""
        logger.error(
            "HTTP listener: accept failed %d more time(s) in %g s: %s%s",
            self.count,
            self.interval,
            self.last_error,
            where,
        )
        self.count = 0
        self.flush_handle = self.loop.call_later(self.interval, self.flush)


def accept_failure(context: dict[str, Any]) -> str | None:
    """``"accept"`` when an exception-handler context is asyncio's report of a failed
    accept, ``"retry"`` for the retry asyncio scheduled after one that then failed (the
    listener closed meanwhile: the same incident), None for anything else."""
    message = str(context.get("message", ""))
    if message.startswith("socket.accept() out of system resource"):
        return "accept"
    if message.startswith("Exception in callback") and "_start_serving" in message:
        return "retry"
    return None
