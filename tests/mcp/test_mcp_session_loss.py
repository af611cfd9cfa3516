"""A Streamable HTTP server that forgets our session (404), as a restarted server or a
load balancer without sticky sessions does: the client initializes once more and retries,
and when that cannot work the server is failed and dialed again, never left half-open."""

from __future__ import annotations

from dataclasses import dataclass, field

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
