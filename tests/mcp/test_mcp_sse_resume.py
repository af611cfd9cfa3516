"""Streamable HTTP answers whose SSE stream breaks and is resumed with ``Last-Event-ID``.

The server here keeps every event it sent on a call's stream, as the spec's resumable
servers do, and replays those after the id a GET names. A stream may break anywhere,
inside an event too: what the client resumes from must be the last event it received whole.
"""

from __future__ import annotations

import asyncio
import json
import sys

from aiohttp import web
from mcp_helpers import SERVERS, free_port, listening_process

from bothost.config import McpServerConfig
from bothost.mcp.elicitation import Asker
from tests.helpers import until
from tests.mcp.test_mcp_hostile_http import answer, site  # noqa: F401 (fixture)
from tests.mcp.test_mcp_manager import make_manager, store  # noqa: F401 (fixtures)


async def resumed_stream(request, resumed_from: list) -> tuple[web.StreamResponse, str]:
    """A GET that resumes a stream: its Last-Event-ID kept in ``resumed_from``, the event
    stream opened; a GET without one is refused (this server has no push stream)."""
    last = request.headers.get("Last-Event-ID")
    if last is None:
        raise web.HTTPMethodNotAllowed("GET", ["POST"])
    resumed_from.append(last)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    return response, last


def resumable(first_stream, retry_ms=10):
    """An MCP endpoint whose tools/call answer is sent as SSE event ``e1`` after a priming
    event ``e0``; the POST's stream is written by ``first_stream(data)`` (which may cut it
    short); a GET with ``Last-Event-ID`` replays the events after that id, whole. The ids
    the client resumed from are kept in the returned list."""
    resumed_from: list[str | None] = []
    sent: dict[str, str] = {}

    async def endpoint(request):
        if request.method == "GET":
            response, last = await resumed_stream(request, resumed_from)
            if last == "e0" and "e1" in sent:
                await response.write(f"id: e1\nevent: message\ndata: {sent['e1']}\n\n".encode())
            return response
        message = await request.json()
        if message.get("method") != "tools/call":
            reply = answer(message, [{"name": "slow", "inputSchema": {"type": "object"}}])
            return web.Response(status=202) if reply is None else web.json_response(reply)
        block = {"type": "text", "text": "the whole answer"}
        data = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"content": [block]}})
        sent["e1"] = data
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(f"id: e0\nretry: {retry_ms}\ndata: \n\n".encode())  # priming
        await response.write(first_stream(data).encode())
        return response

    return [web.route("*", "/mcp", endpoint)], resumed_from


async def test_a_stream_cut_inside_an_event_resumes_from_the_last_whole_one(site, make_manager):  # noqa: F811
    # the event's id line arrived, its data only in part: that event was never received
    routes, resumed_from = resumable(lambda data: f"id: e1\nevent: message\ndata: {data[:25]}")
    base = await site(routes)
    manager = await make_manager({"cut": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    result = await manager.call_tool("cut", "slow", {}, timeout=30)
    assert resumed_from == ["e0"]
    assert not result.is_error and result.text == "the whole answer", result.text


async def test_a_servers_retry_delay_is_capped_on_a_calls_stream(site, make_manager, monkeypatch):  # noqa: F811
    # `retry: 100000000` (27 hours) before the stream breaks: the call resumes after the
    # client's ceiling, as the push stream does, not when its own timeout ends it
    monkeypatch.setattr("bothost.mcp.http.MAX_RETRY", 0.1)
    routes, resumed_from = resumable(lambda data: "", retry_ms=100_000_000)
    base = await site(routes)
    manager = await make_manager({"cut": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    result = await manager.call_tool("cut", "slow", {}, timeout=10)
    assert resumed_from == ["e0"]
    assert not result.is_error and result.text == "the whole answer", result.text


async def test_a_line_cut_short_is_not_joined_to_the_resumed_streams_first(site, make_manager):  # noqa: F811
    # the stream ends in the middle of a line: its bytes must not run into the next stream's
    routes, resumed_from = resumable(lambda data: "id: e1\nevent: mess")
    base = await site(routes)
    manager = await make_manager({"cut": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    result = await manager.call_tool("cut", "slow", {}, timeout=30)
    assert resumed_from == ["e0"]
    assert not result.is_error and result.text == "the whole answer", result.text


async def test_a_request_answered_202_with_no_stream_to_answer_on_fails_at_once(site, make_manager):  # noqa: F811
    # a 202 accepts a notification; for a request, the spec wants JSON or SSE. With no push
    # stream open (GET answers 405), nothing could ever bring the answer: the call waited
    # for its whole timeout and then said only "timed out"
    async def endpoint(request):
        if request.method == "GET":
            raise web.HTTPMethodNotAllowed("GET", ["POST"])
        message = await request.json()
        if message.get("method") == "tools/call":
            return web.Response(status=202)
        reply = answer(message, [{"name": "lost", "inputSchema": {"type": "object"}}])
        return web.Response(status=202) if reply is None else web.json_response(reply)

    base = await site([web.route("*", "/mcp", endpoint)])
    manager = await make_manager({"quiet": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    transport = manager.runners["quiet"].session.transport
    await until(lambda: transport._get_task.done())  # its GET was refused: no push stream
    result = await manager.call_tool("quiet", "lost", {}, timeout=5)
    assert result.is_error
    assert "answered 202 (accepted) and has no stream open to send the answer on" in result.text


async def test_a_request_answered_202_fails_when_the_push_stream_closes_without_it(
    site,  # noqa: F811
    make_manager,  # noqa: F811
):
    # with a push stream open, a request answered 202 could still get its answer there; once
    # that stream closed without it, the call waited out its whole timeout for nothing
    close_stream = asyncio.Event()
    gets = 0

    async def endpoint(request):
        nonlocal gets
        if request.method == "GET":
            gets += 1
            if gets > 1:
                raise web.HTTPMethodNotAllowed("GET", ["POST"])
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            await response.write(b": open\n\n")
            await close_stream.wait()
            return response  # the stream ends, the call's answer never sent on it
        message = await request.json()
        if message.get("method") == "tools/call":
            return web.Response(status=202)
        reply = answer(message, [{"name": "lost", "inputSchema": {"type": "object"}}])
        return web.Response(status=202) if reply is None else web.json_response(reply)

    base = await site([web.route("*", "/mcp", endpoint)])
    manager = await make_manager({"quiet": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    transport = manager.runners["quiet"].session.transport
    await until(lambda: gets == 1)
    call = asyncio.create_task(manager.call_tool("quiet", "lost", {}, timeout=60))
    await until(lambda: bool(transport._accepted))  # its 202 arrived; the stream is open
    close_stream.set()
    async with asyncio.timeout(10):  # well inside the call's own 60 s
        result = await call
    assert result.is_error
    assert result.text == (
        f"quiet/lost failed: HTTP 202 from {base}/mcp: the server answered 202 (accepted) and "
        "its push stream closed without the answer (a Streamable HTTP server answers a "
        "request with JSON or an SSE stream)"
    ), result.text


async def test_an_sdk_server_that_drops_its_stream_mid_call_is_followed_to_the_end(
    make_manager,  # noqa: F811
    tmp_path,
):
    # the official Python SDK's polling: a tool closes its SSE stream (ctx.close_sse_stream)
    # and the client must come back with Last-Event-ID for the rest, progress and questions too
    port = free_port()
    command = [sys.executable, str(SERVERS / "sdk_polling_server.py"), str(port)]
    with listening_process(command, port, tmp_path / "sdk.log", {}):
        url = f"http://127.0.0.1:{port}/mcp"
        # 2025-11-25: its tool asks mid-call on the call's stream, which 2026-07-28 has not
        sdk = McpServerConfig(url=url, protocol="2025-11-25")
        manager = await make_manager({"sdk": sdk}, retry=False)
        seen = []

        async def progress(value, total=None, message=None):
            seen.append(message)

        result = await manager.call_tool("sdk", "count", {"steps": 4}, on_progress=progress)
        assert not result.is_error and result.text == "counted to 4", result.text
        # updates that arrive while one is shown are coalesced: the last is always shown
        assert seen[0] == "step 0" and seen[-1] == "step 3", seen

        async def ask(question):
            assert "Which city?" in question.text
            return {"city": "Zurich"}

        result = await manager.call_tool("sdk", "ask_later", {}, ask=Asker("person", ask))
        assert not result.is_error and result.text == "city: Zurich", result.text


async def test_the_stream_of_a_call_given_up_is_closed_not_resumed(site, make_manager):  # noqa: F811
    # a call that timed out (or that its caller cancelled) is told to the server with
    # notifications/cancelled, and the server ends its stream without an answer, as the spec
    # has it stop; the client went on resuming that stream with GET and Last-Event-ID, six
    # times, each resumed stream held open for a request nobody waited for any more
    cancelled, finished = asyncio.Event(), asyncio.Event()
    resumed_from: list[str] = []

    async def endpoint(request):
        if request.method == "GET":
            response, _ = await resumed_stream(request, resumed_from)
            await finished.wait()  # a resumable server keeps it open for what comes
            return response
        message = await request.json()
        if message.get("method") == "notifications/cancelled":
            cancelled.set()
        if message.get("method") != "tools/call":
            reply = answer(message, [{"name": "slow", "inputSchema": {"type": "object"}}])
            return web.Response(status=202) if reply is None else web.json_response(reply)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b"id: e0\nretry: 10\ndata: \n\n")  # the priming event
        await cancelled.wait()
        return response  # ended without an answer: the work was stopped

    base = await site([web.route("*", "/mcp", endpoint)])
    manager = await make_manager({"slow": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    transport = manager.runners["slow"].session.transport
    await until(lambda: transport._get_task.done())  # its GET was refused: no push stream
    try:
        result = await manager.call_tool("slow", "slow", {}, timeout=1)
        assert result.is_error and "timed out" in result.text, result.text
        await until(cancelled.is_set)
        await until(lambda: not list(transport._tasks))  # nothing reads for the call any more
        assert resumed_from == []
    finally:
        finished.set()
