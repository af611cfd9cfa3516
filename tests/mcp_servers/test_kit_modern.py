"""The kit speaks MCP 2026-07-28 beside 2025-11-25: ``server/discover``, per-request
``_meta``, and ``event/*`` on ``subscriptions/listen`` streams — so a bundled server's
pushes still reach the host's queue when 2026-07-28 is negotiated; and older clients still
get ``initialize``."""

from __future__ import annotations

import json
import logging
import os

import aiohttp
import pytest

from bothost.mcp.http import HttpTransport
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.session import ClientSession
from tests.fakes.open_meteo import ZURICH
from tests.helpers import make_host, until
from tests.mcp.mcp_helpers import Recorder

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"experimental": {"bothost/events": {}}},
}
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


def alerts(host) -> list[dict]:
    sql = "SELECT payload FROM events WHERE type = 'event/weather_alert' ORDER BY id"
    return [json.loads(r["payload"]) for r in host.store.call(lambda db: db.query(sql))]


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
async def test_a_weather_alert_reaches_the_queue_at_either_revision(home, open_meteo, protocol):
    open_meteo.at(ZURICH).hourly_precipitation_probability = [20, 85]
    env = {
        "WEATHER_API_BASE": open_meteo.base,
        "WEATHER_WATCH": "Zurich",
        "WEATHER_ALERT_TEMPERATURE_DROP": "off",
        "WEATHER_ALERT_WIND_GUSTS": "off",
        "WEATHER_ALERT_AQI": "off",
    }
    weather = {"enabled": True, "env": env, "protocol": protocol}
    host = make_host(home, {"mcp": {"servers": {"weather": weather}}})
    await host.start(serve_http=False, tick=False)
    try:
        await until(lambda: alerts(host), timeout=30)
        spoken = host.mcp.runners["weather"].session.protocol_version
        (alert,) = alerts(host)
    finally:
        await host.stop()
    assert spoken == ("2026-07-28" if protocol == "auto" else "2025-11-25")
    assert "Zürich" in alert["summary"]
    assert "_meta" not in alert  # the listen stream's id is how it came, not what it says


async def test_bothost_over_http_gets_events_on_its_listen_stream(echo_server, home):
    url, _ = echo_server
    recorder, log = Recorder(), logging.getLogger("kit-modern")
    transport = HttpTransport(url, log=log)
    session = ClientSession(transport, name="echo", log=log, on_events=recorder.on_events)
    try:
        await session.start()
        assert session.protocol_version == "2026-07-28"
        assert session.listening is not None and session.listening.honored == {
            "bothost/events": True
        }
        result = await session.call_tool("announce", {"summary": "over http"})
        assert result.text == "sent to 1"
        await until(lambda: recorder.events)
    finally:
        await session.close()
    ((source, kind, payload),) = recorder.events
    assert (source, kind, payload["summary"]) == ("echo", "event/echo", "over http")


async def test_a_tool_that_asks_works_at_2026_by_input_required(echo_argv, home):
    from bothost.mcp.stdio import StdioTransport

    asked: list[str] = []

    async def ask(question) -> dict:
        asked.append(question.text)
        return {"answer": "hunter2"}

    log = logging.getLogger("kit-modern")
    env = {"PATH": os.environ["PATH"], "BOTHOST_HOME": str(home)}
    transport = StdioTransport(echo_argv[0], echo_argv[1:], env, log=log)
    session = ClientSession(transport, name="echo", log=log, ask=ask)
    try:
        await session.start()
        assert session.protocol_version == "2026-07-28"
        result = await session.call_tool("ask", {"question": "Password?"})
        # a state the kit did not give reaches no call
        forged = {"name": "ask", "arguments": {"question": "x"}, "requestState": "forged"}
        with pytest.raises(McpError) as refused:
            await session.request("tools/call", {**forged, "inputResponses": {}})
    finally:
        await session.close()
    assert result.text == "answer: hunter2" and asked == ["echo asks: Password?"]
    assert refused.value.code == -32602


async def test_the_http_wire_at_2026(echo_server):
    url, _ = echo_server
    headers = {"Accept": "application/json, text/event-stream"}
    modern = {**headers, "MCP-Protocol-Version": "2026-07-28"}
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}
    async with aiohttp.ClientSession() as http:
        async with http.post(url, json=discover, headers=modern) as response:
            assert response.status == 200 and "Mcp-Session-Id" not in response.headers
            found = (await response.json())["result"]
        # the header must say what _meta says
        async with http.post(url, json=discover, headers=headers) as response:
            refused = await response.json()
            assert response.status == 400 and refused["error"]["code"] == -32020
        listen = {
            "jsonrpc": "2.0",
            "id": "l1",
            "method": "subscriptions/listen",
            "params": {"_meta": META, "notifications": {"bothost/events": True}},
        }
        async with http.post(url, json=listen, headers=modern) as stream:
            first = await anext_message(stream)
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"_meta": META, "name": "announce", "arguments": {"summary": "hi"}},
            }
            async with http.post(url, json=call, headers={**modern, "Accept": "application/json"}):
                pass
            pushed = await anext_message(stream)
    assert found["supportedVersions"] == ["2026-07-28"] and found["resultType"] == "complete"
    assert found["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "echo"
    assert first["method"] == "notifications/subscriptions/acknowledged"
    assert first["params"] == {
        "notifications": {"bothost/events": True},
        "_meta": {SUBSCRIPTION: "l1"},
    }
    assert pushed["method"] == "event/echo" and pushed["params"]["_meta"] == {SUBSCRIPTION: "l1"}


async def anext_message(response: aiohttp.ClientResponse) -> dict:
    """The next SSE `data:` message of `response` (comments and blank lines skipped)."""
    while True:
        line = (await response.content.readline()).decode()
        if not line:
            raise AssertionError("the stream ended")
        if line.startswith("data: "):
            return json.loads(line[6:])


async def test_the_sdk_client_negotiates_2026_with_the_kit(mcp_stdio, echo_argv):
    async with mcp_stdio(echo_argv, mode="auto") as (client, _):
        tools = await client.list_tools()
        added = await client.call_tool("add", {"a": 2, "b": 3})
        version = client.protocol_version
    assert version == "2026-07-28"
    assert "echo" in {t.name for t in tools.tools}
    assert added.structured_content["sum"] == 5


async def test_a_2025_client_still_gets_initialize(mcp_stdio, echo_argv):
    async with mcp_stdio(echo_argv, events=["event/echo"]) as (client, events):
        await client.call_tool("announce", {"summary": "older"})
        (event,) = await events.wait_for("event/echo")
        version = client.protocol_version
    assert version == "2025-11-25" and event["summary"] == "older"
