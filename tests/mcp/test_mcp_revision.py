"""MCP 2026-07-28 beside 2025-11-25: a server that answers only ``server/discover`` (the
official SDK 2.x serving its stateless loop alone) through ``mcp add``, ``mcp tools``,
``mcp call`` and a turn; an older server still gets ``initialize``; and the SEP-2243 header
rules as pure functions."""

from __future__ import annotations

import json
import logging
import os
import sys

import pytest
import yaml
from click.testing import CliRunner
from mcp_helpers import PAGING_SERVER, SERVERS

from bothost.agent.mcp_tools import tool_name
from bothost.cli import cli
from bothost.mcp import headers
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.session import EVENTS_CAPABILITY, ClientSession
from bothost.mcp.stdio import StdioTransport
from bothost.models import Address, IncomingMessage
from tests.fakes.llm import last_tool_result
from tests.helpers import make_host

DISCOVER_ONLY = SERVERS / "discover_only_server.py"
SILENT = SERVERS / "silent_server.py"


async def started(script, protocol: str = "auto") -> ClientSession:
    log = logging.getLogger("revision-test")
    transport = StdioTransport(sys.executable, [str(script)], dict(os.environ), log=log)
    session = ClientSession(transport, name="t", log=log, protocol=protocol)
    try:
        await session.start()
    except BaseException:
        await session.close()
        raise
    return session


async def test_a_discover_only_server_is_spoken_to_in_2026_07_28():
    session = await started(DISCOVER_ONLY)
    try:
        assert session.protocol_version == "2026-07-28"
        assert session.server_info["name"] == "discover-only"
        assert session.instructions == "Greets people."
        tools = await session.refresh_tools()
        # the schema is kept as the server gave it, its x-mcp-header mark too
        greet = next(t for t in tools if t["name"] == "greet")
        assert greet["inputSchema"]["properties"]["name"]["x-mcp-header"] == "Name"
        said = json.loads((await session.call_tool("revision", {})).text)
    finally:
        await session.close()
    # the events capability rides in the request's _meta, as the clarification asks
    assert said["protocol"] == "2026-07-28"
    assert said["capabilities"]["experimental"] == {EVENTS_CAPABILITY: {}}


async def test_an_older_server_still_gets_initialize():
    session = await started(PAGING_SERVER)
    try:
        assert session.protocol_version == "2025-11-25"
        assert (await session.call_tool("echo", {"text": "still here"})).text == "still here"
    finally:
        await session.close()


async def test_a_server_that_ignores_unknown_methods_starts_and_works():
    # it never answers server/discover: the probe's bound runs out, and initialize follows
    session = await started(SILENT)
    try:
        assert session.protocol_version == "2025-11-25"
        assert session.server_info["name"] == "silent"
        result = await session.call_tool("hello", {})
    finally:
        await session.close()
    assert result.text == "hello from an old server"


async def test_a_pinned_revision_is_the_only_one_tried():
    session = await started(PAGING_SERVER, protocol="2025-11-25")
    assert session.protocol_version == "2025-11-25"
    await session.close()
    # pinned to 2026-07-28, an older server is not spoken to in 2025-11-25
    with pytest.raises(McpError):
        await started(PAGING_SERVER, protocol="2026-07-28")
    # pinned to 2025-11-25, a server that dropped initialize refuses it with -32022
    with pytest.raises(McpError) as refused:
        await started(DISCOVER_ONLY, protocol="2025-11-25")
    assert refused.value.code == -32022


def test_mcp_add_tools_and_call_work_with_a_discover_only_server(home, tmp_path):
    config = tmp_path / "bothost.yaml"
    config.write_text(yaml.safe_dump({"mcp": {"servers": {"weather": {"enabled": False}}}}))

    def bothost(*args: str) -> str:
        result = CliRunner().invoke(cli, ["--home", str(home), "--config", str(config), *args])
        assert result.exit_code == 0, (result.output, result.exception)
        return result.output

    bothost("mcp", "add", "modern", "--", sys.executable, str(DISCOVER_ONLY))
    assert "greet" in bothost("mcp", "tools", "modern")
    assert (
        bothost("mcp", "call", "modern", "greet", '{"name": "Ada"}') == "Hello, Ada, from 2026!\n"
    )


async def test_a_turn_calls_a_discover_only_servers_tool(home, fake_llm):
    host = make_host(
        home,
        {
            "llm": fake_llm.openai_config(),
            "agent": {"approval": "allow"},
            "mcp": {
                "servers": {"modern": {"command": sys.executable, "args": [str(DISCOVER_ONLY)]}}
            },
        },
    )
    await host.start(serve_http=False, tick=False)
    try:
        fake_llm.script = [
            {"tool_calls": [{"name": "activate_tools", "arguments": {"groups": ["modern"]}}]},
            {"tool_calls": [{"name": tool_name("modern", "greet"), "arguments": {"name": "Bo"}}]},
            lambda body: {"text": last_tool_result(body)},
        ]
        message = IncomingMessage(
            address=Address("test", "c1"), text="hi", user="u1", is_admin=True
        )
        reply = await host.handle_message(message)
    finally:
        await host.stop()
    assert "Hello, Bo, from 2026!" in reply.text


@pytest.mark.parametrize(
    ("value", "sent"),
    [
        ("us-west1", "us-west1"),
        ("us west 1", "us west 1"),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?abc?=", "=?base64?PT9iYXNlNjQ/YWJjPz0=?="),  # would read as encoded
    ],
)
def test_a_header_value_is_sent_plain_only_when_it_survives_as_is(value, sent):
    assert headers.encoded(value) == sent


def test_marked_arguments_become_headers_and_null_ones_none():
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "query": {"type": "string"},
        },
    }
    arguments = {"region": "eu", "verbose": None, "count": 3, "query": "SELECT 1"}
    assert headers.for_request(
        "tools/call", {"name": "t", "arguments": arguments}, {"inputSchema": schema}
    ) == {
        "Mcp-Method": "tools/call",
        "Mcp-Name": "t",
        "Mcp-Param-Region": "eu",
        "Mcp-Param-Count": "3",
    }


@pytest.mark.parametrize(
    ("properties", "why"),
    [
        ({"v": {"type": "string", "x-mcp-header": ""}}, "not a header name"),
        ({"v": {"type": "string", "x-mcp-header": "My Region"}}, "not a header name"),
        ({"v": {"type": "string", "x-mcp-header": "Région"}}, "not a header name"),
        ({"v": {"type": "number", "x-mcp-header": "Score"}}, "not string, integer or boolean"),
        ({"v": {"type": "object", "x-mcp-header": "Data"}}, "not string, integer or boolean"),
        (
            {
                "a": {"type": "string", "x-mcp-header": "MyField"},
                "b": {"type": "string", "x-mcp-header": "myfield"},
            },
            "repeats",
        ),
        ({"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}, "outside"),
    ],
)
def test_a_tool_with_a_malformed_header_mark_is_refused(properties, why):
    assert why in (headers.refusal({"type": "object", "properties": properties}) or "")


def test_sound_header_marks_are_not_refused():
    schema = {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "Region"}}}
    assert headers.refusal(schema) is None
