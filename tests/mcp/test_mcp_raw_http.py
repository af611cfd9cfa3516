"""Servers that break HTTP itself (the status line, the chunked framing, a body cut
short), as raw TCP servers on 127.0.0.1: what aiohttp cannot parse reaches a person and
the model as one clear line naming the server, never aiohttp's own text (its exception
reprs, a status the server never sent, the server's bytes)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import pytest

from bothost.config import McpServerConfig
from bothost.mcp.serverlog import log_path
from tests.mcp.test_mcp_hostile_http import answer
from tests.mcp.test_mcp_manager import make_manager, state, store  # noqa: F401 (fixtures)

NOT_ALLOWED = b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n"
BAD_STATUS = b"HTTP/1.1 OK-ish \x00garbage\r\nContent-Length: 0\r\n\r\n"


class Closing(Exception):
    """Write these bytes, then close the connection."""


Respond = Callable[[str, dict | None], Awaitable[bytes]]


def ok(reply: dict | None) -> bytes:
    """A well-formed HTTP/1.1 JSON answer carrying `reply` (202 for a notification)."""
    if reply is None:
        return b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
    body = json.dumps(reply).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


@pytest.fixture
async def raw_server():
    servers = []

    async def serve(respond: Respond) -> str:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while head := await reader.readuntil(b"\r\n\r\n"):
                    lines = head.decode().split("\r\n")
                    fields = dict(line.lower().split(": ", 1) for line in lines[1:] if line)
                    length = int(fields.get("content-length", 0))
                    body = await reader.readexactly(length) if length else b""
                    message = json.loads(body) if body else None
                    try:
                        writer.write(await respond(lines[0].split(" ")[0], message))
                    except Closing as last:
                        writer.write(last.args[0])
                        return
                    await writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError):
                pass
            finally:
                writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        servers.append(server)
        return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/mcp"

    yield serve
    for server in servers:
        server.close()
        await server.wait_closed()


def call_answered(broken: bytes, get: bytes = NOT_ALLOWED) -> Respond:
    """A server that answers tools/call with `broken` and closes, and GET with `get`."""

    async def respond(method, message):
        if method != "POST":
            return get
        if message is not None and message.get("method") == "tools/call":
            raise Closing(broken)
        return ok(answer(message or {}))

    return respond


async def test_a_malformed_status_line_is_one_clear_line(raw_server, make_manager):  # noqa: F811
    async def respond(method, message):
        return BAD_STATUS

    url = await raw_server(respond)
    manager = await make_manager({"bad": McpServerConfig(url=url)}, retry=False)
    assert (
        state(manager, "bad").error == f"POST {url}: the answer could not be read (Bad status line)"
    )


@pytest.mark.parametrize("framing", ["application/json", "text/event-stream"])
@pytest.mark.parametrize(
    "cut",
    ["Transfer-Encoding: chunked\r\n\r\n100\r\ndata: {", "Content-Length: 1000\r\n\r\ndata: {"],
)
async def test_a_body_cut_short_is_one_clear_line(raw_server, make_manager, framing, cut):  # noqa: F811
    head = f"HTTP/1.1 200 OK\r\nContent-Type: {framing}\r\n{cut}"
    url = await raw_server(call_answered(head.encode()))
    manager = await make_manager({"bad": McpServerConfig(url=url)}, retry=False)
    result = await manager.call_tool("bad", "echo", {}, timeout=10)
    assert result.is_error, result.text
    if framing == "application/json":
        assert result.text.startswith(f"bad/echo failed: POST {url}: the answer was cut off ("), (
            result.text
        )
    else:
        assert result.text == "bad/echo failed: stream ended before the answer arrived"
    assert "Error" not in result.text and "<" not in result.text, result.text


async def test_a_broken_resume_of_a_call_stream_is_one_clear_line(raw_server, make_manager):  # noqa: F811
    # the call's stream ends with an id to resume from; the GET that resumes it is answered
    # with a status line aiohttp cannot parse
    body = b"id: 1\nretry: 0\ndata:\n\n"
    head = f"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {len(body)}\r\n"
    url = await raw_server(call_answered(head.encode() + b"\r\n" + body, BAD_STATUS))
    manager = await make_manager({"bad": McpServerConfig(url=url)}, retry=False)
    result = await manager.call_tool("bad", "echo", {}, timeout=10)
    assert result.text == (
        f"bad/echo failed: stream ended and could not be resumed: GET {url}: the answer "
        "could not be read (Bad status line)"
    ), result.text


async def test_a_stream_of_messages_that_are_not_json_rpc_is_a_few_log_lines(
    raw_server,
    make_manager,  # noqa: F811
    home,
):
    garbage = b"".join(b"data: not json %d\r\n\r\n" % n for n in range(3_000))

    async def respond(method, message):
        if method != "POST":
            return NOT_ALLOWED
        reply = answer(message or {})
        if message is None or message.get("method") != "tools/call":
            return ok(reply)
        body = garbage + b"data: " + json.dumps(reply).encode() + b"\r\n\r\n"
        head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        return f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body

    url = await raw_server(respond)
    manager = await make_manager({"noisy": McpServerConfig(url=url)}, retry=False)
    result = await manager.call_tool("noisy", "echo", {"n": 1}, timeout=10)
    assert not result.is_error and json.loads(result.text) == {"n": 1}, result.text
    skipped = [
        line for line in log_path(home, "noisy").read_text().splitlines() if "skipped" in line
    ]
    assert 1 <= len(skipped) <= 2, skipped[:3]  # one a minute; one per message was 3,000
