"""What a person reads when a URL is not a Streamable HTTP MCP server."""

from __future__ import annotations

import pytest
from aiohttp import web

from bothost.config import McpServerConfig
from tests.helpers import free_port, serve_app
from tests.mcp.test_mcp_manager import make_manager, state, store  # noqa: F401 (fixtures)

PAGE = (
    "<!DOCTYPE html><html><head><title>Welcome</title></head><body>" + "x" * 5000 + "</body></html>"
)


@pytest.fixture
async def site():
    runners = []

    async def serve(routes):
        app = web.Application()
        app.add_routes(routes)
        runner, url = await serve_app(app)
        runners.append(runner)
        return url

    yield serve
    for runner in runners:
        await runner.cleanup()


async def test_a_legacy_sse_server_is_named_as_such(site, make_manager):  # noqa: F811
    async def stream(request):
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b"event: endpoint\ndata: /messages?session_id=1\n\n")
        return response

    async def refuse(request):
        raise web.HTTPMethodNotAllowed("POST", ["GET"])

    base = await site([web.get("/sse", stream), web.post("/sse", refuse)])
    manager = await make_manager({"old": McpServerConfig(url=f"{base}/sse")}, retry=False)
    error = state(manager, "old").error
    assert "legacy SSE transport, which bothost does not support" in error


async def test_an_html_page_is_not_pasted_into_the_error(site, make_manager):  # noqa: F811
    async def page(request):
        return web.Response(status=404, text=PAGE, content_type="text/html")

    base = await site([web.post("/mcp", page), web.get("/mcp", page)])
    manager = await make_manager({"web": McpServerConfig(url=f"{base}/mcp")}, retry=False)
    error = state(manager, "web").error
    assert "HTTP 404" in error and "not an MCP endpoint" in error
    assert "<html" not in error.lower() and len(error) < 300


async def test_a_page_answered_200_fails_at_once_not_after_the_timeout(site, make_manager):  # noqa: F811
    async def page(request):
        return web.Response(text=PAGE, content_type="text/html")

    base = await site([web.post("/", page), web.get("/", page)])
    config = McpServerConfig(url=f"{base}/", timeout=120)
    manager = await make_manager({"home": config}, retry=False)
    error = state(manager, "home").error
    assert error is not None and "not an MCP endpoint" in error


async def test_a_refused_connection_is_said_in_plain_words(make_manager):  # noqa: F811
    # as the LLM client and `mcp search` say it, not aiohttp's "Cannot connect to host
    # 127.0.0.1:9 ssl:default [Connect call failed ('127.0.0.1', 9)]"
    url = f"http://127.0.0.1:{free_port()}/mcp"
    manager = await make_manager({"r": McpServerConfig(url=url)}, retry=False)
    result = await manager.call_tool("r", "x", {})
    error = state(manager, "r").error
    for text in (error, result.text):
        assert f"POST {url}: unreachable: Connection refused" in text
        assert "ssl:default" not in text and "Connect call failed" not in text


@pytest.mark.parametrize("answer", ["unreachable", "404"])
async def test_the_error_names_the_url_without_its_password_or_token(site, make_manager, answer):  # noqa: F811
    """Found from outside: `bothost mcp call` (and a turn's tool result, which the model
    reads) said "not running (failed: POST http://bob:hunter2pass@…/mcp?token=QSECRET:
    unreachable …)"; only `mcp list` and doctor masked the URL."""
    if answer == "unreachable":
        base = "http://127.0.0.1:9"  # the discard port: nothing listens
    else:

        async def page(request):
            return web.Response(status=404, text="no")

        base = await site([web.post("/mcp", page), web.get("/mcp", page)])
    url = base.replace("://", "://bob:hunter2pass@") + "/mcp?token=QSECRET"
    manager = await make_manager({"r": McpServerConfig(url=url)}, retry=False)
    result = await manager.call_tool("r", "x", {})
    error = state(manager, "r").error
    for text in (error, result.text):
        assert "bob:***@127.0.0.1" in text and "hunter2pass" not in text and "QSECRET" not in text


async def test_credentials_in_the_url_beside_an_authorization_header_are_one_clear_line(
    make_manager,  # noqa: F811
    caplog,
):
    """Found from outside: `mcp add r --url http://bob:pw@host/mcp --header
    'Authorization=Bearer …'` made aiohttp raise ValueError at every start: 'MCP server r
    failed to start' with a 20-line traceback, in every CLI command's output."""
    config = McpServerConfig(
        url="http://bob:pw@127.0.0.1:9/mcp", headers={"Authorization": "Bearer t"}
    )
    manager = await make_manager({"r": config}, retry=False)
    error = state(manager, "r").error
    assert "Authorization" in error and "bob:***@" in error and "pw@" not in error
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
