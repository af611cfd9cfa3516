"""A Streamable HTTP server that forgets our session (404), as a restarted server or a
load balancer without sticky sessions does: the client initializes once more and retries,
and when that cannot work the server is failed and dialed again, never left half-open."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest
from aiohttp import web

from bothost.config import McpServerConfig
from tests.helpers import until
from tests.mcp.test_mcp_hostile_http import answer, site, state  # noqa: F401 (fixture)
from tests.mcp.test_mcp_manager import make_manager, store  # noqa: F401 (fixtures)


@dataclass
class Sessions:
    """A stateful server's sessions; `down` answers initialize 503 (a server starting up),
    `amnesiac` forgets every session as soon as it is made (no sticky routing)."""

    live: set[str] = field(default_factory=set)
    made: int = 0
    down: bool = False
    amnesiac: bool = False
    seen: list[tuple[str, str | None]] = field(default_factory=list)

    async def endpoint(self, request: web.Request) -> web.StreamResponse:
        session = request.headers.get("Mcp-Session-Id")
        if request.method == "GET":
            raise web.HTTPMethodNotAllowed("GET", ["POST"])
        if request.method == "DELETE":
            self.live.discard(session or "")
            return web.Response()
        message = await request.json()
        self.seen.append((message.get("method") or "answer", session))
        if message.get("method") == "initialize":
            if self.down:
                return web.Response(status=503, text="starting up")
            self.made += 1
            made = f"s{self.made}"
            if not self.amnesiac:
                self.live.add(made)
            return web.json_response(answer(message), headers={"Mcp-Session-Id": made})
        if session is None:  # as the SDKs' stateful servers answer
            return web.Response(status=400, text="Bad Request: No valid session ID provided")
        if session not in self.live:
            return web.Response(status=404, text="Session not found")
        reply = answer(message)
        return web.Response(status=202) if reply is None else web.json_response(reply)


async def test_a_session_that_cannot_be_made_again_fails_the_server_and_it_is_dialed_again(
    site,  # noqa: F811
    make_manager,  # noqa: F811
):
    # the server restarted (every session forgotten) and answers 503 while it starts: the
    # new initialize failed, and the session was left without an id, "ready", every later
    # call failing with "HTTP 400 … No valid session ID provided" until the host restarted
    server = Sessions()
    base = await site([web.route("*", "/mcp", server.endpoint)])
    manager = await make_manager({"lb": McpServerConfig(url=f"{base}/mcp")})
    server.live.clear()
    server.down = True
    failed = await manager.call_tool("lb", "echo", {"n": 1}, timeout=10)
    server.down = False
    runner = manager.runners["lb"]
    await until(lambda: runner.restarts == 1 and state(manager, "lb").state == "ready", timeout=20)
    result = await manager.call_tool("lb", "echo", {"n": 2}, timeout=10)
    assert (result.is_error, result.text) == (False, '{"n": 2}')
    assert failed.is_error
    assert "forgot our session" in failed.text and "HTTP 503" in failed.text, failed.text
    assert "starting up" in failed.text


async def test_a_new_session_forgotten_at_once_fails_the_call_clearly(site, make_manager):  # noqa: F811
    # the new session's own notifications/initialized came back 404: the client waited for
    # the lock it held itself, and the call ended as a bare "timed out" after its timeout
    server = Sessions()
    base = await site([web.route("*", "/mcp", server.endpoint)])
    manager = await make_manager({"lb": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    server.live.clear()
    server.amnesiac = True
    before = len(server.seen)
    result = await manager.call_tool("lb", "echo", {}, timeout=10)
    assert result.is_error
    assert "timed out" not in result.text, result.text
    assert "forgot our session" in result.text and "Session not found" in result.text
    await until(lambda: state(manager, "lb").state == "failed")
    assert [m for m, _ in server.seen[before:]].count("initialize") == 1  # once, not a loop


@dataclass
class PushSessions:
    """A stateful server with a push stream. `get_answers` says, GET by GET, what each is
    answered: "stream" (opened: the first one until `restart` is set, which forgets every
    session as a restart does; later ones until `finish` is set), or a status code with a
    JSON-RPC error body; past the list, every GET gets the last entry. An unknown session's
    POST gets 400."""

    get_answers: list[object]
    live: set[str] = field(default_factory=set)
    gets: list[str | None] = field(default_factory=list)
    initializes: int = 0
    restart: asyncio.Event = field(default_factory=asyncio.Event)
    finish: asyncio.Event = field(default_factory=asyncio.Event)

    async def endpoint(self, request: web.Request) -> web.StreamResponse:
        session = request.headers.get("Mcp-Session-Id")
        if request.method == "GET":
            self.gets.append(session)
            wanted = self.get_answers[min(len(self.gets), len(self.get_answers)) - 1]
            if wanted != "stream":
                body = {
                    "jsonrpc": "2.0",
                    "error": {"code": -32000, "message": "Bad Request: No valid session ID"},
                    "id": None,
                }
                return web.json_response(body, status=int(str(wanted)))
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            await response.write(b"retry: 10\n\n: open\n\n")
            if len(self.gets) > 1:
                await self.finish.wait()
                return response
            await self.restart.wait()
            self.live.clear()  # the server restarted: every session forgotten
            return response
        message = await request.json()
        if message.get("method") == "initialize":
            self.initializes += 1
            made = f"s{self.initializes}"
            self.live.add(made)
            return web.json_response(answer(message), headers={"Mcp-Session-Id": made})
        if session not in self.live:
            return web.Response(status=400, text="Bad Request: No valid session ID provided")
        reply = answer(message)
        return web.Response(status=202) if reply is None else web.json_response(reply)


async def test_a_get_refused_400_after_a_working_stream_makes_a_new_session(site, make_manager):  # noqa: F811
    # the push stream worked, then its resumption was answered 400 with a JSON-RPC "No valid
    # session" body: before, that read as "no push stream", and nothing was dialed again
    server = PushSessions(["stream", 400, "stream"])
    base = await site([web.route("*", "/mcp", server.endpoint)])
    manager = await make_manager({"p": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    await until(lambda: len(server.gets) == 1)
    server.restart.set()
    await until(lambda: len(server.gets) >= 3 and server.initializes == 2, timeout=10)
    server.finish.set()
    assert server.gets[:3] == ["s1", "s1", "s2"]  # the new session's stream is opened
    status = state(manager, "p")
    assert (status.state, status.renewals) == ("ready", 1)


@pytest.mark.parametrize("refusal", [405, 400])
async def test_a_server_without_a_push_stream_is_not_dialed_again(site, make_manager, refusal):  # noqa: F811
    # 405, or a 400 on the very first GET, is a server that never had a push stream
    server = PushSessions([refusal])
    base = await site([web.route("*", "/mcp", server.endpoint)])
    manager = await make_manager({"p": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    transport = manager.runners["p"].session.transport
    await until(lambda: transport._get_task is not None and transport._get_task.done())
    result = await manager.call_tool("p", "echo", {"n": 1}, timeout=10)
    assert (result.is_error, result.text) == (False, '{"n": 1}')
    assert (len(server.gets), server.initializes) == (1, 1)
    assert state(manager, "p").renewals == 0


async def test_a_get_answered_404_every_time_dials_once_not_in_a_loop(site, make_manager):  # noqa: F811
    # a 404 on a session's first GET means the session is gone, and a new one is made; its
    # GET refused the same way is a server that has no push stream, not a reason to go on
    # making sessions (before: a new session every few milliseconds, for ever)
    server = PushSessions([404])
    base = await site([web.route("*", "/mcp", server.endpoint)])
    manager = await make_manager({"p": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    runner = manager.runners["p"]
    await until(lambda: server.initializes >= 2)

    def settled() -> bool:
        task = runner.session.transport._get_task
        return task is not None and task.done() and not runner.session.renewing

    await until(settled)
    result = await manager.call_tool("p", "echo", {"n": 2}, timeout=10)
    assert (result.is_error, result.text) == (False, '{"n": 2}')
    assert (len(server.gets), server.initializes) == (2, 2)
