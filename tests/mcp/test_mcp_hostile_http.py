"""Streamable HTTP servers that misbehave, as small real aiohttp servers on 127.0.0.x.

Each case: the host stays up, the error a person reads names the server and what it did,
and a well-behaved server beside it keeps working.
"""

from __future__ import annotations

import json

import pytest
from aiohttp import web

from bothost.config import McpServerConfig
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
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, host, 0).start()
        runners.append(runner)
        bound, port = runner.addresses[0][:2]
        return f"http://{bound}:{port}"

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
