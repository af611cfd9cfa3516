"""The kit's Streamable HTTP mode (`--http`): SDK client over HTTP, sessions, Host/Origin."""

from __future__ import annotations

import asyncio

import aiohttp
from mcp import types

from tests.helpers import initialize_request

# Generous: a loaded CI machine can take seconds to start Python with aiohttp.
STARTUP = 30.0
INIT = initialize_request("raw")
ACCEPT = {"Accept": "application/json, text/event-stream"}


async def test_sdk_client_over_http(echo_url, mcp_http):
    async def on_elicit(context, params):
        return types.ElicitResult(action="accept", content={"answer": "over http"})

    async with mcp_http(echo_url, events=["event/echo"], elicitation_callback=on_elicit) as (
        client,
        events,
    ):
        tools = await client.list_tools()
        assert "echo" in {t.name for t in tools.tools}
        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert added.structured_content["sum"] == 5
        failed = await client.call_tool("fail", {"message": "nope"})
        assert failed.is_error and failed.content[0].text == "nope"
        asked = await client.call_tool("ask", {"question": "Where?"})
        assert asked.content[0].text == "answer: over http"
        await client.call_tool("announce", {"summary": "pushed"})
        (event,) = await events.wait_for("event/echo")
        assert event["summary"] == "pushed"


async def test_sessions_and_headers(echo_url):
    async with aiohttp.ClientSession() as http:
        async with http.post(echo_url, json=INIT, headers=ACCEPT) as response:
            assert response.status == 200
            session_id = response.headers["Mcp-Session-Id"]
            assert (await response.json())["result"]["serverInfo"]["name"] == "echo"
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        async with http.post(echo_url, json=ping, headers=ACCEPT) as response:
            assert response.status == 400  # no session header
        headers = ACCEPT | {"Mcp-Session-Id": session_id}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        async with http.post(echo_url, json=note, headers=headers) as response:
            assert response.status == 202
        async with http.post(echo_url, json=ping, headers=headers) as response:
            assert (await response.json()) == {"jsonrpc": "2.0", "id": 2, "result": {}}
        old = headers | {"MCP-Protocol-Version": "1999-01-01"}
        async with http.post(echo_url, json=ping, headers=old) as response:
            assert response.status == 400
        async with http.delete(echo_url, headers=headers) as response:
            assert response.status == 200
        async with http.post(echo_url, json=ping, headers=headers) as response:
            assert response.status == 404


async def test_foreign_host_or_origin_is_refused_and_loopback_accepted(echo_url):
    port = echo_url.split(":")[2].split("/")[0]
    refused = [
        ({"Host": "evil.example:80"}, 421),
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "http://localhost:1"}, 403),
    ]
    accepted = [
        {"Host": h, "Origin": f"http://{h}"} for h in (f"localhost:{port}", f"127.0.0.1:{port}")
    ]
    async with aiohttp.ClientSession() as http:
        for extra, status in refused:
            async with http.post(echo_url, json=INIT, headers=ACCEPT | extra) as response:
                assert response.status == status, extra
        for extra in accepted:
            async with http.post(echo_url, json=INIT, headers=ACCEPT | extra) as response:
                assert response.status == 200, extra


async def test_sigterm_with_an_open_event_stream_exits_promptly(echo_server):
    url, process = echo_server
    async with aiohttp.ClientSession() as http:
        async with http.post(url, json=INIT, headers=ACCEPT) as response:
            session_id = response.headers["Mcp-Session-Id"]
        headers = {"Accept": "text/event-stream", "Mcp-Session-Id": session_id}
        async with http.get(url, headers=headers) as stream:
            assert stream.status == 200
            process.terminate()
            async with asyncio.timeout(5):
                assert await process.wait() == 0
