"""Streamable HTTP servers that misbehave, as small real aiohttp servers on 127.0.0.x.

Each case: the host stays up, the error a person reads names the server and what it did,
and a well-behaved server beside it keeps working.
"""

from __future__ import annotations

import json

import pytest
from aiohttp import web

from bothost.config import McpServerConfig
from tests.helpers import serve_app
from tests.mcp.test_mcp_manager import make_manager, state, store  # noqa: F401 (fixtures)

SECRET = "s3cret-api-key"


def answer(message: dict, tools: list[dict] | None = None) -> dict | None:
    """What a tiny, correct MCP server answers to `message` (None for a notification)."""
    method, id_ = message.get("method"), message.get("id")
    if id_ is None:
        return None
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "tiny", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": tools or [{"name": "echo", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        text = json.dumps(message["params"].get("arguments", {}))
        result = {"content": [{"type": "text", "text": text}]}
    else:
        return {"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": "no"}}
    return {"jsonrpc": "2.0", "id": id_, "result": result}


async def mcp_endpoint(request: web.Request) -> web.Response:
    if request.method == "GET":
        raise web.HTTPMethodNotAllowed("GET", ["POST"])
    reply = answer(await request.json())
    if reply is None:
        return web.Response(status=202)
    return web.json_response(reply)


@pytest.fixture
async def site():
    runners = []

    async def serve(routes, host="127.0.0.1"):
        app = web.Application()
        app.add_routes(routes)
        runner, url = await serve_app(app, host)
        runners.append(runner)
        return url

    yield serve
    for runner in runners:
        await runner.cleanup()


async def test_a_redirect_to_another_host_is_refused_and_sends_it_nothing(site, make_manager):  # noqa: F811
    seen = []

    async def elsewhere(request):
        seen.append(dict(request.headers))
        return await mcp_endpoint(request)

    other = await site([web.route("*", "/mcp", elsewhere)], host="127.0.0.2")

    async def moved(request):
        raise web.HTTPTemporaryRedirect(f"{other}/mcp")

    base = await site([web.route("*", "/mcp", moved)])
    good = await site([web.route("*", "/mcp", mcp_endpoint)])
    manager = await make_manager(
        {
            "moved": McpServerConfig(url=f"{base}/mcp", headers={"X-Api-Key": SECRET}),
            "good": McpServerConfig(url=f"{good}/mcp"),
        },
        retry=False,
    )
    error = state(manager, "moved").error
    assert state(manager, "moved").state == "failed"
    assert "redirect" in error and other in error, error
    assert seen == []  # not a byte, let alone the key, went to the other host
    assert state(manager, "good").state == "ready"
    result = await manager.call_tool("good", "echo", {"a": 1})
    assert not result.is_error and result.text == '{"a": 1}'


async def test_a_redirect_on_the_same_server_is_followed(site, make_manager):  # noqa: F811
    # Starlette answers /mcp with 307 to /mcp/ (the official Python SDK's mount)
    async def slash(request):
        raise web.HTTPTemporaryRedirect("/mcp/")

    base = await site([web.route("*", "/mcp", slash), web.route("*", "/mcp/", mcp_endpoint)])
    manager = await make_manager({"slash": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    assert state(manager, "slash").state == "ready", state(manager, "slash").error
    result = await manager.call_tool("slash", "echo", {"b": 2})
    assert not result.is_error and result.text == '{"b": 2}'


async def test_a_401_with_a_bogus_www_authenticate_is_a_clear_error(site, make_manager):  # noqa: F811
    async def refuse(request):
        return web.Response(
            status=401,
            text="who are you",
            headers={"WWW-Authenticate": 'Bearer resource_metadata="javascript:alert(1)", ,=,"'},
        )

    base = await site([web.route("*", "/mcp", refuse)])
    good = await site([web.route("*", "/mcp", mcp_endpoint)])
    manager = await make_manager(
        {"locked": McpServerConfig(url=f"{base}/mcp"), "good": McpServerConfig(url=f"{good}/mcp")},
        retry=False,
    )
    locked = state(manager, "locked")
    assert locked.state in ("failed", "login_needed"), locked
    assert locked.error and "javascript:" not in locked.error, locked.error
    assert len(locked.error) < 500
    assert state(manager, "good").state == "ready"


def tiny_server(call_answer):
    """An MCP endpoint whose tools/call answer is `call_answer(request, message)`."""

    async def endpoint(request):
        if request.method == "GET":
            raise web.HTTPMethodNotAllowed("GET", ["POST"])
        message = await request.json()
        if message.get("method") == "tools/call":
            return await call_answer(request, message)
        reply = answer(message, [{"name": "img", "inputSchema": {"type": "object"}}])
        return web.Response(status=202) if reply is None else web.json_response(reply)

    return [web.route("*", "/mcp", endpoint)]


HUGE = 20 * 1024 * 1024  # past the 16 MB bound on one answer


def huge_image(message):
    block = {"type": "image", "mimeType": "image/png", "data": "A" * HUGE}
    return {"jsonrpc": "2.0", "id": message["id"], "result": {"content": [block]}}


@pytest.mark.parametrize("framing", ["json", "sse"])
async def test_a_huge_image_result_fails_that_call_only(site, make_manager, framing):  # noqa: F811
    async def big(request, message):
        body = json.dumps(huge_image(message))
        if framing == "json":
            return web.Response(text=body, content_type="application/json")
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(f"event: message\ndata: {body}\n\n".encode())
        return response

    base = await site(tiny_server(big))
    good = await site([web.route("*", "/mcp", mcp_endpoint)])
    manager = await make_manager(
        {"big": McpServerConfig(url=f"{base}/mcp"), "good": McpServerConfig(url=f"{good}/mcp")},
        retry=False,
    )
    result = await manager.call_tool("big", "img", {}, timeout=20)
    assert result.is_error and result.text.startswith("big/img failed: "), result.text
    assert "16777216 bytes" in result.text or "stream ended" in result.text, result.text
    assert not (manager.home / "media").exists() or not any((manager.home / "media").iterdir())
    assert not (await manager.call_tool("good", "echo", {"c": 3})).is_error
    assert state(manager, "big").state == "ready"  # one bad answer, not a dead server


async def test_an_sse_answer_cut_mid_event_fails_the_call_at_once(site, make_manager):  # noqa: F811
    async def cut(request, message):
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        half = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"content": []}})
        await response.write(f"event: message\ndata: {half[:20]}".encode())
        return response  # the stream ends inside the event, with no id to resume from

    base = await site(tiny_server(cut))
    manager = await make_manager({"cut": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    result = await manager.call_tool("cut", "img", {}, timeout=30)
    assert result.is_error, result.text
    assert result.text == "cut/img failed: stream ended before the answer arrived"


async def test_a_schema_with_ref_cycles_is_offered_and_called(site, make_manager):  # noqa: F811
    schema = {
        "type": "object",
        "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
        "properties": {"head": {"$ref": "#/$defs/node"}},
    }

    async def endpoint(request):
        if request.method == "GET":
            raise web.HTTPMethodNotAllowed("GET", ["POST"])
        reply = answer(await request.json(), [{"name": "walk", "inputSchema": schema}])
        return web.Response(status=202) if reply is None else web.json_response(reply)

    base = await site([web.route("*", "/mcp", endpoint)])
    manager = await make_manager({"graph": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    from bothost.agent.mcp_tools import McpToolSource
    from bothost.config import Config
    from bothost.mcp.validate import validate

    (tool,) = McpToolSource(manager, Config()).tools("graph")
    assert tool.name == "mcp__graph__walk" and tool.schema == schema
    json.dumps(tool.schema)  # what a provider sends: no cycle in the data itself
    arguments = {"head": {"next": {"next": {}}}}
    assert validate(tool.schema, arguments) is None
    result = await manager.call_tool("graph", "walk", arguments)
    assert not result.is_error and json.loads(result.text) == arguments


async def test_a_large_json_answer_arrives_whole(site, make_manager):  # noqa: F811
    # a body that takes many reads: one read of "up to 16 MB" returns only what has arrived
    text = "x" * (3 * 1024 * 1024)

    async def large(request, message):
        block = {"type": "text", "text": text}
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"content": [block]}}
        return web.json_response(reply)

    base = await site(tiny_server(large))
    manager = await make_manager({"large": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    result = await manager.call_tool("large", "img", {}, timeout=20)
    assert not result.is_error and result.text == text, result.text[:200]


async def test_a_tool_whose_input_is_not_an_object_is_skipped_not_offered(site, make_manager):  # noqa: F811
    # both providers refuse a request holding a function whose parameters are not an object
    # schema, so one such tool would fail every round of a conversation that activated it
    tools = [
        {"name": "scalar", "inputSchema": {"type": "string"}},
        {"name": "either", "inputSchema": {"type": ["object", "null"]}},
        {"name": "echo", "inputSchema": {"type": "object"}},
    ]

    async def endpoint(request):
        if request.method == "GET":
            raise web.HTTPMethodNotAllowed("GET", ["POST"])
        reply = answer(await request.json(), tools)
        return web.Response(status=202) if reply is None else web.json_response(reply)

    base = await site([web.route("*", "/mcp", endpoint)])
    manager = await make_manager({"odd": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    assert [t["name"] for t in manager.tools("odd")] == ["echo"]
    log = (manager.home / "logs" / "mcp" / "odd.log").read_text()
    assert "'scalar' takes no JSON object (inputSchema type 'string')" in log, log
    assert "'either' takes no JSON object" in log, log


async def test_an_answer_with_a_huge_header_is_one_clear_line(site, make_manager):  # noqa: F811
    # aiohttp refuses a header line over 8190 bytes as "400, message='Got more than 8190
    # bytes when reading: b'aaaa…'', url='…'": a status the server never sent, the server's
    # bytes and the URL as aiohttp holds it, pasted into the error a person and the model read
    async def endpoint(request):
        return web.Response(
            text="{}", content_type="application/json", headers={"X-Big": "a" * 10_000}
        )

    base = await site([web.route("*", "/mcp", endpoint)])
    manager = await make_manager(
        {"big": McpServerConfig(url=f"{base}/mcp?sig=abc123")}, retry=False
    )
    error = state(manager, "big").error
    assert error == (
        f"POST {base}/mcp?sig=***: the answer could not be read (Got more than 8190 bytes "
        "when reading)"
    ), error


async def test_an_sse_answer_with_lone_cr_line_ends_is_read(site, make_manager):  # noqa: F811
    # the event-stream grammar allows a lone CR as a line end; such an answer once waited
    # for a line end that never came and ended as "stream ended before the answer arrived"
    async def cr_only(request, message):
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        reply = answer(message)
        await response.write(f"event: message\rdata: {json.dumps(reply)}\r\r".encode())
        return response

    base = await site(tiny_server(cr_only))
    manager = await make_manager({"cr": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    result = await manager.call_tool("cr", "img", {"a": 1}, timeout=10)
    assert not result.is_error and json.loads(result.text) == {"a": 1}, result.text


async def test_a_tool_name_with_hidden_or_reordering_characters_is_not_offered(
    site,  # noqa: F811
    make_manager,  # noqa: F811
):
    # U+202E turns "read\u202egnp.exe" into "readexe.png" on a page; a zero-width space
    # makes "delete" and "del\u200bete" two tools that read the same
    tools = [
        {"name": "read\u202egnp.exe", "inputSchema": {"type": "object"}},
        {"name": "del\u200bete", "inputSchema": {"type": "object"}},
        {"name": "bell\x07", "inputSchema": {"type": "object"}},
        {"name": "echo", "inputSchema": {"type": "object"}},
    ]

    async def endpoint(request):
        if request.method == "GET":
            raise web.HTTPMethodNotAllowed("GET", ["POST"])
        reply = answer(await request.json(), tools)
        return web.Response(status=202) if reply is None else web.json_response(reply)

    base = await site([web.route("*", "/mcp", endpoint)])
    manager = await make_manager({"spoof": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    assert [t["name"] for t in manager.tools("spoof")] == ["echo"]
    log = (manager.home / "logs" / "mcp" / "spoof.log").read_text()
    assert "tools/list: skipped 3 tools" in log, log
    assert "'read\\u202egnp.exe' has hidden or text-reordering characters (\\u202e)" in log, log
    assert "'del\\u200bete' has hidden or text-reordering characters (\\u200b)" in log, log
    assert "'bell\\x07' has hidden or text-reordering characters (\\u0007)" in log, log
