"""The Streamable HTTP transport (MCP 2025-11-25) on aiohttp.

Each client message is one POST; the answer comes back as JSON or as an SSE stream that
may also carry the server's requests and notifications about that call. After initialize
every request carries ``Mcp-Session-Id`` (when the server issued one) and
``MCP-Protocol-Version``. A GET stream carries what the server pushes unasked (``event/*``).
Streams that end early are resumed with GET and ``Last-Event-ID`` after the server's
``retry:`` delay; a 404 on a request that carried a session id means the server forgot the
session, so the session is initialized again and the request sent once more. The push
stream does the same when its GET is refused with 404, or with 400 after it had worked in
this session (a restarted server no longer knows our id), so a restart under a running host
brings a new session and a new stream with nobody calling a tool; a 405, or a 400 on a
session's first GET, is a server without a push stream. The new session's first GET carries
the old stream's ``Last-Event-ID``, so a server that kept its events across the restart
replays what it pushed meanwhile. Redirects are
followed on the server's own origin only: one to another host is refused with its target
named, since following it would send our headers and the request to a host nobody chose.
While the session's notification queue is full (its store failing, say) the SSE streams
are not read before the next message: the server's writes wait in TCP, as a stdio server's
wait on its pipe, and nothing it sent is dropped. A connection idle ``KEEPALIVE`` seconds is
closed rather than used again, before the server's own idle close can meet a request.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp.http_exceptions import HttpProcessingError
from yarl import URL

from bothost import redact
from bothost.logs import connection
from bothost.logs.rate import RateLimitedLog
from bothost.mcp import deadline, jsonrpc, revision
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.oauth.auth import OAuth
from bothost.mcp.tasks import TaskSet
from bothost.mcp.transport import Backlog, OnClose, OnMessage, OnSessionLost, TransportError
from bothost.sse import MAX_EVENT_BYTES, SseError, SseParser

CONNECT_TIMEOUT = 10.0
# seconds an idle connection to the server is kept for the next request: below the 5 s after
# which Node's and uvicorn's servers close one. aiohttp's 15 s sent a request after a long
# login on a connection a busy Node server was closing, and the reset failed the session.
KEEPALIVE = 4.0
DEFAULT_RETRY = 1.0  # seconds before resuming a stream when the server gave no retry:
MAX_RETRY = 30.0  # the ceiling on any wait to resume a stream (a server's retry: too)
MAX_RESUMES = 5  # give a request up after this many resumed streams without its answer
DELETE_TIMEOUT = 2.0
ERROR_BODY_CHARS = 300
MAX_ERROR_JSON = 64 * 1024  # an error answer's body read for its JSON-RPC error (data too)
READ_CHUNK = 256 * 1024  # one read of a JSON answer's body
SSE_PROBE_SECONDS = 3.0  # a legacy SSE server sends its `endpoint` event at once
SSE_PROBE_BYTES = 512
MAX_AUTH_RETRIES = 3  # logins or refreshes for one request; more would be a loop (step-up)
# Redirects are followed only on the server's own origin (Starlette sends /mcp to /mcp/), and
# this many at most: a redirect elsewhere would hand our headers (API keys, the session id)
# and the request's body to a host the user never named.
MAX_REDIRECTS = 5
REDIRECTS = (301, 302, 303, 307, 308)


class RedirectRefused(TransportError):
    """The server sent us to another origin, or round in circles."""


@dataclass(frozen=True)
class GetRefused:
    """A GET answered with an error status (its body's start kept, to tell why)."""

    status: int
    body: str = ""

    def __str__(self) -> str:
        return f"HTTP {self.status}"


def session_forgotten(status: int, body: str) -> bool:
    """Whether an error answer means the server no longer knows our session id.

    The spec says 404; the TypeScript SDK's reference servers answer 400 "No valid session
    ID provided", so that is taken to mean the same.
    """
    return status == 404 or (status == 400 and "session" in body.lower())


def unreadable(exc: aiohttp.ClientResponseError) -> str:
    """An answer aiohttp could not parse, said without what its message pastes in: a status
    the server never sent (400), the server's bytes after a colon, and the URL unmasked."""
    return f"the answer could not be read ({first_words(str(exc.message), exc)})"


def cut_off(exc: BaseException) -> str:
    """A body that broke while read, said as aiohttp's parser put it (the length or chunk
    framing it wanted), not as the exception reprs aiohttp nests in its message."""
    cause = exc.__cause__
    if isinstance(cause, HttpProcessingError):
        return f"the answer was cut off ({first_words(str(cause.message), cause)})"
    if isinstance(exc, aiohttp.ClientPayloadError):
        return "the answer was cut off (the connection closed mid-answer)"
    return f"the answer was cut off ({first_words(str(exc), exc)})"


def first_words(message: str, exc: BaseException) -> str:
    """A parser's message up to its first colon: what follows is the server's own bytes."""
    return message.split(":", 1)[0].strip().rstrip(".")[:ERROR_BODY_CHARS] or type(exc).__name__


def resume_delay(parser: SseParser, failures: int = 0) -> float:
    """Seconds to wait before opening a stream again: the server's last ``retry:`` (else
    DEFAULT_RETRY), doubled per failure in a row, never past MAX_RETRY (a server's
    ``retry:`` is a wish: 100000000 would hold a call until its own timeout)."""
    base = parser.retry_ms / 1000 if parser.retry_ms is not None else DEFAULT_RETRY
    return min(base * 2**failures, MAX_RETRY)


class HttpTransport:
    """One Streamable HTTP endpoint (see module docstring)."""

    def __init__(
        self,
        url: str,
        headers: dict[str, str] | None = None,
        *,
        log: logging.Logger,
        auth: OAuth | None = None,
    ) -> None:
        self.url = url
        # in errors (a tool result the model reads, `mcp call`): no password or token= in it
        self.shown_url = redact.mask_url(url)
        self.headers = dict(headers or {})
        self.auth = auth  # OAuth: the Authorization header, and what to do on 401/403
        self.log = log
        # what a server sends is its to repeat: one line a minute, with a count
        self.complaints = RateLimitedLog(log)
        self.pid: int | None = None
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.on_session_lost: OnSessionLost | None = None
        self.backlog: Backlog | None = None
        self._http: aiohttp.ClientSession | None = None
        self._on_message: OnMessage | None = None
        self._on_close: OnClose | None = None
        self._tasks = TaskSet(self.log, "HTTP transport task")
        self._get_task: asyncio.Future[Any] | None = None
        # requests answered 202 while the push stream was open: it may yet bring the answer
        self._accepted: set[Any] = set()
        self._streams: dict[Any, asyncio.Future[Any]] = {}  # request id -> its SSE stream's reader
        self._generation = 0  # bumped each time the session is dialed again
        self._lost_lock = asyncio.Lock()
        self._redialing = False  # the session is being initialized again (under the lock)
        self._push_parser: SseParser | None = None  # the push stream's, for its last event id
        self._resume_from: str | None = None  # that id, carried into a renewed session
        # renewals the push stream asked for since a GET of it last opened: a new session
        # whose GET is refused as well is a server without a push stream, not a reason to
        # go on making sessions
        self._push_renewals = 0
        self._quick_renewals = 0  # push-stream renewals in a row, each soon after the last
        self._last_renewal = -MAX_RETRY
        self._closed = False
        self._reported = False  # on_close was called (the server went away, or we closed)

    async def start(self, on_message: OnMessage, on_close: OnClose) -> None:
        self._on_message, self._on_close = on_message, on_close
        timeout = aiohttp.ClientTimeout(
            total=None, connect=CONNECT_TIMEOUT, sock_connect=CONNECT_TIMEOUT
        )
        connector = aiohttp.TCPConnector(keepalive_timeout=KEEPALIVE)
        self._http = aiohttp.ClientSession(timeout=timeout, connector=connector)

    def negotiated(self, protocol_version: str) -> None:
        self.protocol_version = protocol_version

    async def opened(self) -> None:
        if self._get_task is not None:
            self._get_task.cancel()
        self._get_task = self._tasks.spawn(self._push_stream(self._generation))

    def _headers(self, accept: str, last_event_id: str | None = None) -> dict[str, str]:
        headers = {**self.headers, "Accept": accept}
        if self.auth is not None and (credential := self.auth.authorization()):
            headers["Authorization"] = credential
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        return headers

    # -- POST ----------------------------------------------------------------------------

    async def send(self, message: jsonrpc.Message, headers: dict[str, str] | None = None) -> None:
        if revision.stateless(self.protocol_version) and jsonrpc.is_notification(message):
            # 2026-07-28's HTTP wire has no client notifications: a request given up is
            # told by closing its stream (abandoned()), and there is no initialized
            self.log.debug("%s not sent: no notifications at 2026-07-28", message.get("method"))
            return
        await self._post(message, may_redial=True, extra=headers)

    async def _post(
        self,
        message: jsonrpc.Message,
        may_redial: bool,
        auth_tries: int = 0,
        extra: dict[str, str] | None = None,
    ) -> None:
        if self._http is None or self._closed:
            raise TransportError("transport is closed")
        if self.auth is not None:
            with deadline.held():  # a refresh is the authorization server's time
                await self.auth.prepare()
        headers = {**(extra or {}), **self._headers("application/json, text/event-stream")}
        headers["Content-Type"] = "application/json"
        had_session, generation = bool(self.session_id), self._generation
        try:
            resp = await self._request("POST", headers, jsonrpc.encode(message))
        except RedirectRefused as exc:
            raise TransportError(f"POST {self.shown_url}: {exc}") from None
        except (aiohttp.ClientConnectorError, OSError) as exc:
            # nobody answers at that address any more: the server is gone, as when a stdio
            # process exits, so pending calls fail now and the manager dials again later
            reason = f"unreachable: {connection.cause(exc)}"
            self._report(reason)
            raise TransportError(f"POST {self.shown_url}: {reason}") from None
        except aiohttp.ClientResponseError as exc:  # aiohttp could not parse the answer
            raise TransportError(f"POST {self.shown_url}: {unreadable(exc)}") from None
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise TransportError(f"POST {self.shown_url}: {exc or type(exc).__name__}") from None
        except ValueError as exc:  # aiohttp refuses to build it: the config is at fault
            raise TransportError(f"POST {self.shown_url}: {self._unsendable(exc)}") from None
        if resp.status >= 400:
            whole = (await resp.text(errors="replace"))[:MAX_ERROR_JSON]
            body = whole[:ERROR_BODY_CHARS]
            resp.release()
            if await self._authorized_again(resp, headers, auth_tries):
                return await self._post(message, may_redial, auth_tries + 1, extra)
            kind = resp.headers.get("Content-Type", "")
            if self._error_answer(message, kind, whole):
                return  # a JSON-RPC error for this request (-32022 names revisions)
            if (
                had_session
                and may_redial
                and message.get("method") != "initialize"
                and session_forgotten(resp.status, body)
            ):
                if self._redialing and generation == self._generation:
                    # the session made a moment ago is forgotten already (a load balancer
                    # without sticky sessions): dialing again would only repeat it
                    refused = await self._refusal(resp.status, kind, body)
                    raise TransportError(f"it was forgotten at once too: {refused}")
                await self._session_lost(generation)
                return await self._post(message, may_redial=False, extra=extra)
            raise TransportError(await self._refusal(resp.status, kind, body))
        if not self.session_id and resp.headers.get("Mcp-Session-Id"):
            self.session_id = resp.headers["Mcp-Session-Id"]
        related = message.get("id") if jsonrpc.is_request(message) else None
        kind = resp.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if resp.status == 202 or kind not in ("application/json", "text/event-stream"):
            resp.release()
            if resp.status != 202 and related is not None:  # a web page, not an answer
                self._fail(
                    related,
                    f"HTTP {resp.status} from {self.shown_url}: answered "
                    f"{kind or 'no content type'}, not an MCP endpoint",
                )
            elif related is not None and (self._get_task is None or self._get_task.done()):
                # a request accepted without an answer: only a push stream could still bring
                # one (a server may misplace it there), and none is open, so waiting out the
                # whole timeout would end in a bare "timed out"
                self._fail(related, self._accepted_why("has no stream open to send the answer on"))
            elif related is not None:
                self._accepted.add(related)  # failed when the push stream closes without it
        elif kind == "application/json":
            await self._json_body(resp, related)
        else:
            stream = self._tasks.spawn(self._call_stream(resp, related))
            if related is not None:
                self._streams[related] = stream
                stream.add_done_callback(lambda done: self._stream_done(related, done))

    def _error_answer(self, message: jsonrpc.Message, content_type: str, body: str) -> bool:
        """Deliver an HTTP error's body when it is a JSON-RPC error answering `message`: a
        2026-07-28 server refuses with both (400 and -32022 with the revisions it speaks,
        404 and -32601), and the code and data matter more than the status."""
        if "json" not in content_type.lower() or not jsonrpc.is_request(message):
            return False
        try:
            answers = jsonrpc.decode(body)
        except jsonrpc.ProtocolError:
            return False  # cut at ERROR_BODY_CHARS, or not JSON-RPC: said as HTTP
        if len(answers) != 1 or "error" not in answers[0]:
            return False
        if answers[0].get("id") != message["id"]:
            return False
        self._hand_on(answers[0], message["id"], len(body))
        return True

    def _stream_done(self, related: Any, stream: asyncio.Future[Any]) -> None:
        if self._streams.get(related) is stream:
            del self._streams[related]

    def abandoned(self, request_id: Any) -> None:
        """Nobody waits for `request_id` any more: its stream is closed, not resumed (the
        server was told with notifications/cancelled and may end it without an answer)."""
        self._accepted.discard(request_id)
        stream = self._streams.pop(request_id, None)
        if stream is not None:
            stream.cancel()

    def _accepted_why(self, stream: str) -> str:
        return (
            f"HTTP 202 from {self.shown_url}: the server answered 202 (accepted) and {stream} "
            "(a Streamable HTTP server answers a request with JSON or an SSE stream)"
        )

    def _accepted_lost(self) -> None:
        """The push stream closed: a request answered 202 has nothing left to bring its
        answer (a reconnected stream carries what is pushed from then on, not old answers)."""
        lost, self._accepted = self._accepted, set()
        for related in lost:
            self._fail(related, self._accepted_why("its push stream closed without the answer"))

    def _unsendable(self, exc: ValueError) -> str:
        """Why aiohttp would not build the request, as the setting to change."""
        named = {key.lower() for key in self._headers("")}
        if URL(self.url).user is not None and "authorization" in named:
            return (
                "the url carries a user name and password and an Authorization header is "
                "set too (headers, or the server's OAuth login): keep one of them"
            )
        return str(exc) or type(exc).__name__

    async def _request(
        self, method: str, headers: dict[str, str], data: bytes | None = None
    ) -> aiohttp.ClientResponse:
        """Send to the server's URL, following redirects on its own origin only (see
        ``MAX_REDIRECTS``); raises RedirectRefused for one that leads elsewhere."""
        assert self._http is not None
        url, origin = URL(self.url), URL(self.url).origin()
        for _ in range(MAX_REDIRECTS + 1):
            sent = headers
            if self.auth is not None:  # a DPoP proof is for one method and URL (RFC 9449)
                sent = {
                    **headers,
                    **self.auth.proof(method, str(url), headers.get("Authorization")),
                }
            resp = await self._http.request(
                method, url, data=data, headers=sent, allow_redirects=False
            )
            if self.auth is not None:
                self.auth.answered(str(url), resp.headers)
            location = resp.headers.get("Location")
            if resp.status not in REDIRECTS or not location:
                return resp
            resp.release()
            url = resp.url.join(URL(location))
            if url.origin() != origin:
                raise RedirectRefused(
                    f"HTTP {resp.status} redirect to {str(url)[:200]}, another host: not "
                    "followed (if the server moved, set its url to the new address)"
                )
        raise RedirectRefused(f"more than {MAX_REDIRECTS} redirects")

    async def _authorized_again(
        self, resp: aiohttp.ClientResponse, sent: dict[str, str], tries: int
    ) -> bool:
        """A 401 or 403 the OAuth hook could answer with a new token (bounded per request)."""
        if self.auth is None or resp.status not in (401, 403) or tries >= MAX_AUTH_RETRIES:
            return False
        challenge = resp.headers.get("WWW-Authenticate", "")
        # the server has answered: logging in is not its silence (bothost.mcp.deadline)
        with deadline.held():
            return await self.auth.challenge(resp.status, challenge, sent.get("Authorization"))

    async def _refusal(self, status: int, content_type: str, body: str) -> str:
        """One line a person can act on for an HTTP error answer, never a pasted page."""
        where = f"HTTP {status} from {self.shown_url}"
        if status == 405 and await self._speaks_legacy_sse():
            return (
                f"{where}: this URL speaks the legacy SSE transport, which bothost does "
                "not support; use the server's Streamable HTTP URL (often …/mcp)"
            )
        if "html" in content_type.lower() or body.lstrip().startswith("<"):
            return f"{where}: an HTML page, not an MCP endpoint"
        return f"{where}: {' '.join(body.split())[:ERROR_BODY_CHARS]}"

    async def _speaks_legacy_sse(self) -> bool:
        # the 2024-11-05 transport: GET opens a stream whose first event is `endpoint`
        assert self._http is not None
        try:
            async with (
                asyncio.timeout(SSE_PROBE_SECONDS),
                self._http.get(self.url, headers={"Accept": "text/event-stream"}) as resp,
            ):
                if "text/event-stream" not in resp.headers.get("Content-Type", ""):
                    return False
                head = await resp.content.read(SSE_PROBE_BYTES)
                return b"event: endpoint" in head or b"event:endpoint" in head
        except (aiohttp.ClientError, TimeoutError, OSError):
            return False

    async def _json_body(self, resp: aiohttp.ClientResponse, related: Any) -> None:
        # read() returns what has arrived so far, so a body is gathered read by read, and
        # refused as soon as it passes the bound (never held whole past it)
        chunks: list[bytes] = []
        size = 0
        try:
            while size <= MAX_EVENT_BYTES and (chunk := await resp.content.read(READ_CHUNK)):
                chunks.append(chunk)
                size += len(chunk)
        except (aiohttp.ClientError, OSError) as exc:
            self._fail(related, f"POST {self.shown_url}: {cut_off(exc)}")
            return
        finally:
            resp.release()
        if size > MAX_EVENT_BYTES:
            self._fail(related, f"answer longer than {MAX_EVENT_BYTES} bytes refused")
        elif size:
            data = b"".join(chunks)
            if data.strip():
                self._deliver(data, related)

    def _deliver(self, data: bytes | str, related: Any) -> list[jsonrpc.Message]:
        messages = self._decode(data)
        size = len(data) // max(len(messages), 1)
        for message in messages:
            self._hand_on(message, related, size)
        return messages

    def _decode(self, data: bytes | str) -> list[jsonrpc.Message]:
        try:
            return jsonrpc.decode(data)
        except jsonrpc.ProtocolError as exc:
            self.complaints.warning(
                "message", "skipped a message that is not JSON-RPC (%s): %.200r", exc, data
            )
            return []

    def _hand_on(self, message: jsonrpc.Message, related: Any, size: int) -> None:
        assert self._on_message is not None
        if jsonrpc.is_response(message):
            self._accepted.discard(message["id"])
        try:
            self._on_message(message, related, size)
        except Exception:  # boundary: one bad message must not stop the stream
            self.log.exception("handling a message failed: %.200r", message)

    def _fail(self, related: Any, why: str) -> None:
        if related is not None and self._on_message is not None:
            self._on_message(jsonrpc.error(related, jsonrpc.CONNECTION_CLOSED, why), related)

    # -- SSE streams ---------------------------------------------------------------------

    async def _read(self, resp: aiohttp.ClientResponse, parser: SseParser, related: Any) -> bool:
        """Deliver a stream's messages; True once the answer to `related` went by."""
        try:
            async for chunk in resp.content.iter_any():
                for event in parser.feed(chunk):
                    if event.event != "message" or not event.data.strip():
                        continue  # e.g. the priming event that only carries id and retry
                    messages = self._decode(event.data)
                    size = len(event.data) // max(len(messages), 1)
                    for message in messages:
                        # A flooding stream waits in TCP, not in memory: while the session
                        # holds a full queue (the store failing, say) no further message is
                        # handed on and no further chunk read, so aiohttp stops reading the
                        # socket and the server's writes wait, as a stdio server's do on its
                        # full pipe. Asked before each message, not each chunk: one chunk
                        # carries thousands of small events, past the queue's drop bound.
                        if self.backlog is not None and (waiter := self.backlog()) is not None:
                            await waiter
                        self._hand_on(message, related, size)
                        if (
                            related is not None
                            and jsonrpc.is_response(message)
                            and message["id"] == related
                        ):
                            return True
        except (aiohttp.ClientError, SseError, OSError) as exc:
            self.log.info("SSE stream broke: %s", exc or type(exc).__name__)
        finally:
            resp.release()
            parser.end()  # a resumed stream starts clean, after the last whole event
        return False

    async def _call_stream(self, resp: aiohttp.ClientResponse, related: Any) -> None:
        parser = SseParser()
        for _ in range(MAX_RESUMES + 1):
            if await self._read(resp, parser, related) or related is None or self._closed:
                return
            if parser.last_id is None:
                break  # nothing to resume from
            await asyncio.sleep(resume_delay(parser))
            resumed = await self._get(parser.last_id)
            if not isinstance(resumed, aiohttp.ClientResponse):  # a str() says why
                self._fail(related, f"stream ended and could not be resumed: {resumed}")
                return
            resp = resumed
        self._fail(related, "stream ended before the answer arrived")

    async def _get(self, last_event_id: str | None) -> aiohttp.ClientResponse | GetRefused | str:
        """Open a GET stream; the response, the server's refusal, or why not ("unreachable: …"
        when nobody listens)."""
        assert self._http is not None
        try:
            if self.auth is not None:
                await self.auth.prepare()
            resp = await self._request("GET", self._headers("text/event-stream", last_event_id))
        except RedirectRefused as exc:
            return f"refused: {exc}"
        except (aiohttp.ClientConnectorError, OSError) as exc:
            return f"unreachable: {connection.cause(exc)}"
        except aiohttp.ClientResponseError as exc:  # aiohttp could not parse the answer
            return f"GET {self.shown_url}: {unreadable(exc)}"
        except (aiohttp.ClientError, TimeoutError) as exc:
            return f"GET failed: {exc or type(exc).__name__}"
        kind = resp.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if resp.status != 200 or kind != "text/event-stream":
            try:
                body = (await resp.text(errors="replace"))[:ERROR_BODY_CHARS]
            except (aiohttp.ClientError, OSError, TimeoutError):
                body = ""
            finally:
                resp.release()
            return GetRefused(resp.status, body)
        return resp

    async def _push_stream(self, generation: int) -> None:
        """The standalone GET stream for server push; reconnects until the transport closes."""
        try:
            await self._push_streams(generation)
        finally:
            self._accepted_lost()  # no stream any more: a request accepted meanwhile is too

    async def _push_streams(self, generation: int) -> None:
        parser = SseParser()
        # the previous session's last event: a server that kept its events replays after it
        carried, self._resume_from = self._resume_from, None
        parser.resume_from(carried)
        self._push_parser = parser
        failures = 0
        worked = False  # a GET of this session opened a stream
        while not self._closed:
            had_session = bool(self.session_id)
            resp = await self._get(parser.last_id)
            if isinstance(resp, GetRefused) and carried is not None and resp.status < 500:
                # the server does not know the old session's event id: ask without it
                self.log.info("resuming after event %.80r refused (%s)", carried, resp)
                parser.resume_from(carried := None)
                continue
            if isinstance(resp, GetRefused) and resp.status in (400, 404, 405):
                if had_session and self._session_gone(resp, worked):
                    self.log.info("server push stream: the session is gone (%s)", resp)
                    self._tasks.spawn(self._redial(generation))
                    return
                self.log.debug("no server push stream (%s)", resp)
                return
            if isinstance(resp, GetRefused):
                failures += 1
                self.log.info("server push stream unavailable (%s); retrying", resp)
            elif isinstance(resp, str):
                if resp.startswith("refused"):
                    self.log.warning("no server push stream: %s", resp)
                    return
                if resp.startswith("unreachable"):
                    self._report(resp)  # the server went away; the manager dials again
                    return
                failures += 1
                self.log.info("server push stream unavailable (%s); retrying", resp)
            else:
                failures, worked, self._push_renewals = 0, True, 0
                try:
                    await self._read(resp, parser, None)
                finally:
                    self._accepted_lost()
                if carried is not None and parser.last_id == carried:
                    parser.resume_from(None)  # nothing replayed after it: not the server's id
                carried = None
            await asyncio.sleep(resume_delay(parser, failures))

    def _session_gone(self, refused: GetRefused, worked: bool) -> bool:
        """Whether a refused GET means the server forgot our session (see module docstring).

        404 is the spec's answer for a session it does not know, unless this session was
        itself made because a GET was refused and none has opened since; a 400 means the
        same (the TypeScript SDK's example servers' "No valid session ID provided") only
        once a GET of this session worked, since a server that never had a push stream may
        answer its first GET with 400.
        """
        if refused.status == 404:
            return worked or self._push_renewals == 0
        said = not refused.body or session_forgotten(400, refused.body)
        return refused.status == 400 and worked and said

    def _renewal_wait(self) -> float:
        """Seconds before the push stream renews the session: none the first time, doubling
        while renewals come within MAX_RETRY of each other (a server that opens a stream for
        each new session and then forgets it must not have us make sessions in a loop)."""
        now = time.monotonic()
        soon = now - self._last_renewal < MAX_RETRY
        self._quick_renewals = self._quick_renewals + 1 if soon else 0
        self._last_renewal = now
        if not self._quick_renewals:
            return 0.0
        return min(DEFAULT_RETRY * 2 ** (self._quick_renewals - 1), MAX_RETRY)

    # -- session loss and shutdown -----------------------------------------------------

    async def _session_lost(self, generation: int) -> None:
        """The server forgot our session: initialize once more; raises TransportError.

        When the new session cannot be made (the server answers its initialize with an
        error, or forgets it at once), the connection is reported closed, so the manager
        fails the server and dials it again with backoff: left without a session, every
        later request would be refused for the missing id until the host restarted.
        """
        async with self._lost_lock:
            if generation != self._generation or self._closed:
                return  # another request already dialed again
            self._generation += 1
            self.session_id = None
            self.protocol_version = None
            if self._push_parser is not None:  # the new session's stream resumes after it
                self._resume_from = self._push_parser.last_id
            if self._get_task is not None:
                self._get_task.cancel()
                self._get_task = None
            if self.on_session_lost is None:
                return
            self._redialing = True
            try:
                await self.on_session_lost()
            except (McpError, TransportError) as exc:
                why = f"forgot our session, and a new one failed: {exc}"
                self._report(why)
                raise TransportError(f"the server {why}") from None
            finally:
                self._redialing = False

    async def _redial(self, generation: int) -> None:
        """The push stream found the session forgotten: dial again, nobody waiting on it."""
        self._push_renewals += 1
        await asyncio.sleep(self._renewal_wait())
        try:
            await self._session_lost(generation)
        except TransportError as exc:  # reported closed already: the manager dials again
            self.log.info("%s", exc)

    async def close(self) -> None:
        if self._http is None or self._http.closed:
            return
        first, self._closed = not self._closed, True
        try:
            if first:
                await self._say_goodbye()
        finally:
            # even when the goodbye is cut short (the manager stopping a server that was
            # closing already): an aiohttp session left open leaks its connections
            await self._http.close()
            self._report("closed by the host")

    async def _say_goodbye(self) -> None:
        assert self._http is not None
        tasks = [t for t in self._tasks if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.session_id:  # tell the server it may forget us; best effort
            try:
                async with asyncio.timeout(DELETE_TIMEOUT):
                    resp = await self._request("DELETE", self._headers("*/*"))
                    resp.release()
            except (aiohttp.ClientError, OSError, TimeoutError, RedirectRefused):
                pass

    def _report(self, reason: str) -> None:
        if not self._reported and self._on_close is not None:
            self._reported = True
            self._on_close(reason)
