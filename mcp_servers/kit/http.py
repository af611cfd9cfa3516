"""The Streamable HTTP transport (`--http HOST:PORT`, endpoint `/mcp`), on aiohttp.

The same `Session` logic as stdio, framed per MCP's Streamable HTTP rules: `initialize`
opens a session named by the `Mcp-Session-Id` header; a `tools/call` POST is answered with
an SSE stream that carries the call's progress, log and elicitation messages before its
response; other requests get a plain JSON response; notifications and responses get 202.
A GET opens the session's stream for watcher notifications, DELETE ends the session.

A 2026-07-28 request (its revision in ``params._meta``, and the same in the
``MCP-Protocol-Version`` header, or it is refused 400 with -32020) needs no session: such
requests share one protocol `Session` and get no ``Mcp-Session-Id``; watcher events reach
those clients on the SSE answer of their ``subscriptions/listen`` instead of a GET.

Every request's Host and Origin must name this server (DNS-rebinding protection): a web
page on another origin could otherwise drive a server bound to loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import secrets
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from aiohttp import web

from .modern import STATELESS_PROTOCOLS, UNSUPPORTED_VERSION, VERSION_KEY, unsupported
from .session import ALL_PROTOCOLS, INVALID_REQUEST, PARSE_ERROR, Session

if TYPE_CHECKING:
    from .server import Server

logger = logging.getLogger(__name__)

MCP_PATH = "/mcp"
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
# Oldest sessions are closed beyond this, so abandoned clients cannot grow memory forever.
MAX_SESSIONS = 64
# A comment line this often keeps proxies from closing an idle GET stream.
KEEPALIVE_SECONDS = 15.0
MAX_BODY_BYTES = 64 * 1024 * 1024
# On SIGTERM, requests still running get this long before their connections are closed.
SHUTDOWN_SECONDS = 3.0
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
HEADER_MISMATCH = -32020  # the version header is missing or disagrees with _meta
# requests whose answer is an SSE stream when the client accepts one: a call's progress and
# questions ride on it; a listen stream is nothing else
STREAMED = ("tools/call", "subscriptions/listen")


class HttpSession:
    """A protocol `Session` plus its optional standalone GET stream."""

    def __init__(self, server: Server) -> None:
        self.id = secrets.token_hex(16)
        self.stream: web.StreamResponse | None = None
        self.stream_lock = asyncio.Lock()
        self.closed = asyncio.Event()
        self.protocol: Session = server.open_session(self.push)

    async def push(self, message: dict[str, Any]) -> None:
        """Deliver a message that belongs to no request (watcher events) on the GET stream."""
        if self.stream is None:
            raise ConnectionError("no open GET stream for server-initiated messages")
        async with self.stream_lock:
            await self.stream.write(_sse(message))


def allowed_hosts(host: str, port: int, extra: list[str]) -> set[str]:
    """Host[:port] values accepted in Host and Origin headers."""
    names = {host if ":" not in host else f"[{host}]"}
    with contextlib.suppress(ValueError):
        if ipaddress.ip_address(host).is_loopback:
            names.update(LOOPBACK_NAMES)
    if host == "localhost":
        names.update(LOOPBACK_NAMES)
    accepted = {f"{name}:{port}" for name in names}
    if port == 80:
        accepted.update(names)
    for item in extra:
        accepted.add(item if ":" in item.rsplit("]", 1)[-1] else f"{item}:{port}")
    return {a.lower() for a in accepted}


class HttpTransport:
    """The aiohttp application that serves one `Server` at `/mcp`."""

    def __init__(self, server: Server, hosts: set[str]) -> None:
        self.server = server
        self.hosts = hosts
        self.sessions: dict[str, HttpSession] = {}
        self.shared: HttpSession | None = None  # 2026-07-28 requests' (see module docstring)
        self.app = web.Application(client_max_size=MAX_BODY_BYTES)
        self.app.router.add_route("POST", MCP_PATH, self.post)
        self.app.router.add_route("GET", MCP_PATH, self.get)
        self.app.router.add_route("DELETE", MCP_PATH, self.delete)

    def _refuse(self, request: web.Request) -> web.Response | None:
        host = request.headers.get("Host", "").lower()
        if host not in self.hosts:
            logger.warning("refused request with Host %r", host)
            return _error_response(421, INVALID_REQUEST, "Invalid Host header")
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc.lower() not in self.hosts:
            logger.warning("refused request with Origin %r", origin)
            return _error_response(403, INVALID_REQUEST, "Invalid Origin header")
        version = request.headers.get(VERSION_HEADER)
        if version is not None and version not in ALL_PROTOCOLS:
            return _error_response(
                400,
                UNSUPPORTED_VERSION,
                f"Unsupported protocol version {version[:40]}",
                unsupported(version),
            )
        return None

    def _session(self, request: web.Request) -> HttpSession | web.Response:
        session_id = request.headers.get(SESSION_HEADER)
        if not session_id:
            return _error_response(400, INVALID_REQUEST, f"Missing {SESSION_HEADER} header")
        session = self.sessions.get(session_id)
        if session is None:
            return _error_response(404, INVALID_REQUEST, "Session not found")
        return session

    async def post(self, request: web.Request) -> web.StreamResponse:
        if refused := self._refuse(request):
            return refused
        try:
            message = json.loads(await request.read())
        except ValueError as exc:
            return _error_response(400, PARSE_ERROR, f"invalid JSON: {exc}")
        if not isinstance(message, dict):
            return _error_response(400, INVALID_REQUEST, "send one JSON-RPC message per POST")
        version = request.headers.get(VERSION_HEADER)
        named = _meta_version(message)
        if named is not None and named != version:
            why = f"{VERSION_HEADER} {version!r:.40} does not match _meta's {named!r:.40}"
            return _error_response(400, HEADER_MISMATCH, why)
        headers: dict[str, str] = {}
        if version in STATELESS_PROTOCOLS and message.get("method") != "initialize":
            session = self._stateless()
        elif message.get("method") == "initialize":
            session = self._new_session()
            headers[SESSION_HEADER] = session.id
        else:
            found = self._session(request)
            if isinstance(found, web.Response):
                return found
            session = found
            headers[SESSION_HEADER] = session.id
        if "method" not in message or "id" not in message:
            session.protocol.receive(message)
            return web.Response(status=202, headers=headers)
        accept = request.headers.get("Accept", "")
        if message.get("method") in STREAMED and "text/event-stream" in accept:
            return await self._answer_sse(request, session, message, headers)
        if message.get("method") == "subscriptions/listen":
            why = "subscriptions/listen needs Accept: text/event-stream"
            return _error_response(400, INVALID_REQUEST, why)
        return await self._answer_json(session, message, headers)

    async def _answer_json(
        self, session: HttpSession, message: dict[str, Any], headers: dict[str, str]
    ) -> web.Response:
        replies: list[dict[str, Any]] = []

        async def sink(outgoing: dict[str, Any]) -> None:
            if "id" in outgoing and "method" in outgoing:
                raise ConnectionError("a JSON response cannot carry a request to the client")
            replies.append(outgoing)

        task = session.protocol.receive(message, sink)
        if task is not None:
            # wait(), not await: a call cancelled by the client must not cancel this handler.
            await asyncio.wait([task])
        answer = next((r for r in replies if r.get("id") == message["id"]), None)
        if answer is None:  # cancelled before it could answer
            return web.Response(status=202, headers=headers)
        return web.json_response(answer, headers=headers)

    async def _answer_sse(
        self,
        request: web.Request,
        session: HttpSession,
        message: dict[str, Any],
        headers: dict[str, str],
    ) -> web.StreamResponse:
        response = _sse_response(headers)
        await response.prepare(request)
        lock = asyncio.Lock()

        async def sink(outgoing: dict[str, Any]) -> None:
            async with lock:
                await response.write(_sse(outgoing))

        task = session.protocol.receive(message, sink)
        try:
            # a listen stream answers only when it ends: the keepalive finds a client gone
            while task is not None and not task.done():
                await asyncio.wait([task], timeout=KEEPALIVE_SECONDS)
                if not task.done():
                    async with lock:
                        await response.write(b": keepalive\n\n")
        except ConnectionError:
            if task is not None:
                task.cancel()
            return response
        with contextlib.suppress(ConnectionError):
            await response.write_eof()
        return response

    async def get(self, request: web.Request) -> web.StreamResponse:
        if refused := self._refuse(request):
            return refused
        if "text/event-stream" not in request.headers.get("Accept", ""):
            return _error_response(406, INVALID_REQUEST, "GET needs Accept: text/event-stream")
        found = self._session(request)
        if isinstance(found, web.Response):
            return found
        session = found
        response = _sse_response({SESSION_HEADER: session.id})
        await response.prepare(request)
        session.stream = response
        try:
            while not session.closed.is_set():
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(KEEPALIVE_SECONDS):
                        await session.closed.wait()
                if session.closed.is_set():
                    break
                async with session.stream_lock:
                    await response.write(b": keepalive\n\n")
        except ConnectionError:
            pass
        finally:
            if session.stream is response:
                session.stream = None
        return response

    async def delete(self, request: web.Request) -> web.Response:
        if refused := self._refuse(request):
            return refused
        found = self._session(request)
        if isinstance(found, web.Response):
            return found
        self.drop(found)
        return web.Response(status=200)

    def _stateless(self) -> HttpSession:
        """The one protocol session 2026-07-28 requests share (made at the first)."""
        if self.shared is None:
            self.shared = HttpSession(self.server)
        return self.shared

    def _new_session(self) -> HttpSession:
        while len(self.sessions) >= MAX_SESSIONS:
            self.drop(next(iter(self.sessions.values())))
        session = HttpSession(self.server)
        self.sessions[session.id] = session
        return session

    def drop(self, session: HttpSession) -> None:
        self.sessions.pop(session.id, None)
        session.closed.set()
        self.server.close_session(session.protocol)


def _sse(message: dict[str, Any]) -> bytes:
    return f"event: message\ndata: {json.dumps(message, ensure_ascii=False)}\n\n".encode()


def _sse_response(headers: dict[str, str]) -> web.StreamResponse:
    return web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", **headers}
    )


def _error_response(status: int, code: int, message: str, data: Any = None) -> web.Response:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return web.json_response({"jsonrpc": "2.0", "id": None, "error": error}, status=status)


def _meta_version(message: dict[str, Any]) -> str | None:
    """The revision a 2026-07-28 request names in its ``_meta``, if any."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


async def serve_http(
    server: Server, host: str, port: int, extra_hosts: list[str] | None = None
) -> None:
    """Serve `server` at http://host:port/mcp until cancelled."""
    transport = HttpTransport(server, allowed_hosts(host, port, extra_hosts or []))
    runner = web.AppRunner(transport.app, access_log=None, shutdown_timeout=SHUTDOWN_SECONDS)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    logger.info(
        "%s %s serving on http://%s:%s%s", server.name, server.version, host, port, MCP_PATH
    )
    try:
        await asyncio.Event().wait()
    finally:
        for session in [*transport.sessions.values(), *filter(None, [transport.shared])]:
            transport.drop(session)  # ends the GET streams, which would hold cleanup up
        await server.stop()
        await runner.cleanup()
