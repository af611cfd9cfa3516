"""The kit's JSON-RPC over stdio, byte by byte: what a hand-written client would see."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from bothost.mcp_servers.kit import Server
from bothost.mcp_servers.kit.session import TOOLS_PAGE_SIZE

# Bound for any one reply; generous because the first one includes Python's start-up.
WAIT = 30.0
PURE = {"private": False, "untrusted": False, "egress": "none", "destructive": False}
WANTS_EVENTS = {"bothost/events": {}}


class RawClient:
    """The echo server on pipes, spoken to in raw JSON lines."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()

    async def recv(self, timeout: float = WAIT) -> dict:
        async with asyncio.timeout(timeout):
            line = await self.process.stdout.readline()
        assert line, "server closed stdout"
        return json.loads(line)

    async def request(self, id_, method, params=None) -> dict:
        await self.send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}})
        return await self.recv()

    async def handshake(self, capabilities=None, version="2025-11-25") -> dict:
        reply = await self.request(
            0,
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply


@pytest.fixture
async def raw(home, tmp_path, echo_argv):
    stderr = (tmp_path / "stderr.log").open("wb")
    process = await asyncio.create_subprocess_exec(
        *echo_argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env=dict(os.environ),
    )
    yield RawClient(process)
    if process.returncode is None:
        process.kill()
        await process.wait()
    stderr.close()


async def test_unknown_methods_fail_at_once(raw):
    assert (await raw.request(0, "ping"))["result"] == {}  # started up
    loop = asyncio.get_running_loop()
    started = loop.time()
    reply = await raw.request(1, "prompts/list", {})
    assert reply == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32601, "message": "Method not found: prompts/list"},
    }
    assert loop.time() - started < 2
    assert (await raw.request("x", "resources/list"))["error"]["code"] == -32601


async def test_version_negotiation(raw):
    reply = await raw.handshake(version="2024-11-05")
    assert reply["result"]["protocolVersion"] == "2024-11-05"
    assert reply["result"]["capabilities"] == {"tools": {"listChanged": False}, "logging": {}}
    newer = await raw.request(
        2, "initialize", {"protocolVersion": "2099-01-01", "capabilities": {}}
    )
    assert newer["result"]["protocolVersion"] == "2025-11-25"
    bad = await raw.request(3, "initialize", {"capabilities": {}})
    assert bad["error"]["code"] == -32602


async def test_malformed_input_and_bad_params(raw):
    await raw.handshake()
    raw.process.stdin.write(b"{not json\n")
    parse = await raw.recv()
    assert parse["id"] is None and parse["error"]["code"] == -32700
    unknown = await raw.request(1, "tools/call", {"name": "nope", "arguments": {}})
    assert unknown["error"] == {"code": -32602, "message": "Unknown tool: nope"}
    not_object = await raw.request(2, "tools/call", {"name": "echo", "arguments": [1]})
    assert not_object["error"]["code"] == -32602
    level = await raw.request(3, "logging/setLevel", {"level": "loud"})
    assert level["error"]["code"] == -32602
    cursor = await raw.request(4, "tools/list", {"cursor": "zzz"})
    assert cursor["error"]["code"] == -32602
    await raw.send({"jsonrpc": "2.0", "id": [1], "method": "ping"})
    assert (await raw.recv())["error"]["code"] == -32600
    await raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": [7]})
    await raw.send({"jsonrpc": "1.0", "id": 9, "method": "ping"})
    assert (await raw.recv())["error"]["code"] == -32600
    assert (await raw.request(5, "ping"))["result"] == {}


async def test_ping_answered_while_a_call_runs_and_cancel_stops_it(raw):
    await raw.handshake()
    await raw.send(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "slow", "arguments": {"seconds": 30}},
        }
    )
    assert await raw.request(8, "ping") == {"jsonrpc": "2.0", "id": 8, "result": {}}
    await raw.send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "user gave up"},
        }
    )
    # The cancelled call never answers; the next thing on stdout is the ping reply.
    assert (await raw.request(9, "ping"))["id"] == 9


async def test_progress_and_log_level(raw):
    await raw.handshake()
    await raw.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "slow",
                "arguments": {"seconds": 0.1},
                "_meta": {"progressToken": "p1"},
            },
        }
    )
    seen = [await raw.recv() for _ in range(12)]
    progress = [m for m in seen if m.get("method") == "notifications/progress"]
    assert [p["params"]["progress"] for p in progress] == list(range(10))
    assert progress[0]["params"] == {
        "progressToken": "p1",
        "progress": 0,
        "total": 10,
        "message": "step 0",
    }
    logs = [m for m in seen if m.get("method") == "notifications/message"]
    assert logs[0]["params"] == {"level": "info", "data": "slow finished"}
    assert seen[-1]["id"] == 1

    assert (await raw.request(2, "logging/setLevel", {"level": "error"}))["result"] == {}
    await raw.send(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "slow", "arguments": {"seconds": 0.05}},
        }
    )
    assert (await raw.recv())["id"] == 3  # no progress token, info log filtered out


async def test_elicitation_times_out_to_no_answer(raw):
    await raw.handshake(capabilities={"elicitation": {}})
    await raw.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "ask", "arguments": {"question": "?", "timeout": 0.2}},
        }
    )
    elicit = await raw.recv()
    assert elicit["method"] == "elicitation/create"
    assert elicit["params"]["requestedSchema"]["required"] == ["answer"]
    cancelled = await raw.recv()
    assert cancelled["method"] == "notifications/cancelled"
    assert cancelled["params"]["requestId"] == elicit["id"]
    assert (await raw.recv())["result"]["content"][0]["text"] == "no answer"


async def test_stray_stdout_writes_do_not_corrupt_the_stream(raw, tmp_path):
    await raw.handshake()
    reply = await raw.request(1, "tools/call", {"name": "stray_output", "arguments": {}})
    assert reply["result"]["content"][0]["text"] == "wrote"
    assert (await raw.request(2, "ping"))["id"] == 2
    raw.process.stdin.close()
    async with asyncio.timeout(WAIT):
        assert await raw.process.wait() == 0
    log = (tmp_path / "stderr.log").read_text()
    assert "stray print" in log and "stray bytes" in log


async def test_eof_ends_the_server_cleanly(raw):
    await raw.handshake()
    raw.process.stdin.close()
    async with asyncio.timeout(WAIT):
        assert await raw.process.wait() == 0
        assert await raw.process.stdout.read() == b""


async def test_tools_list_pages_with_a_cursor():
    server = Server("many")
    for index in range(TOOLS_PAGE_SIZE + 5):
        server.tool(capabilities=PURE, name=f"t{index:03}", description="x")(_noop)
    out: list[dict] = []

    async def sink(message):
        out.append(message)

    session = server.open_session(sink)
    await session.receive({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    first = out[-1]["result"]
    assert len(first["tools"]) == TOOLS_PAGE_SIZE
    await session.receive(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/list",
            "params": {"cursor": first["nextCursor"]},
        }
    )
    second = out[-1]["result"]
    assert [t["name"] for t in second["tools"]] == [f"t{i:03}" for i in range(100, 105)]
    assert "nextCursor" not in second


async def _noop() -> str:
    return ""


def test_a_tool_must_declare_capabilities():
    server = Server("strict")
    with pytest.raises(ValueError, match="capabilities must declare"):
        server.tool(capabilities={"private": False})(_noop)
    with pytest.raises(TypeError):
        server.tool()(_noop)  # type: ignore[call-arg]


async def test_sigterm_stops_the_server_cleanly(raw, tmp_path):
    await raw.handshake()
    await raw.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "slow", "arguments": {"seconds": 30}},
        }
    )
    assert (await raw.request(2, "ping"))["id"] == 2
    raw.process.terminate()
    async with asyncio.timeout(WAIT):
        assert await raw.process.wait() == 0
    assert "echo stopping" in (tmp_path / "stderr.log").read_text()


async def test_a_failing_watcher_keeps_watching(monkeypatch, caplog):
    monkeypatch.setenv("FLAKY_POLL_SECONDS", "0.05")
    server = Server("flaky")
    runs: list[int] = []
    pushed: list[dict] = []

    @server.watcher(interval_env="FLAKY_POLL_SECONDS", default_interval=3600)
    async def flaky(srv):
        runs.append(len(runs))
        if len(runs) == 1:
            raise RuntimeError("first poll breaks")
        await srv.notify("event/flaky", {"id": str(len(runs)), "summary": "ok"})

    async def sink(message):
        if message.get("method"):  # not the answer to initialize
            pushed.append(message)

    session = server.open_session(sink)
    hello = {"protocolVersion": "2025-11-25", "capabilities": {"experimental": WANTS_EVENTS}}
    await session.receive({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
    session.receive({"jsonrpc": "2.0", "method": "notifications/initialized"})
    async with asyncio.timeout(WAIT):
        while len(pushed) < 2:
            await asyncio.sleep(0.01)
    await server.stop()
    assert [m["params"]["id"] for m in pushed[:2]] == ["2", "3"]
    assert "first poll breaks" in caplog.text


def test_state_dir_from_env_or_home(monkeypatch, tmp_path, home):
    server = Server("my-server")
    path = server.state_dir()
    assert path == home / "state" / "my-server" and oct(path.stat().st_mode & 0o777) == "0o700"
    monkeypatch.setenv("MY_SERVER_STATE_DIR", str(tmp_path / "elsewhere"))
    assert server.state_dir() == tmp_path / "elsewhere"


@pytest.mark.parametrize(
    "capabilities, heard",
    [
        ({}, False),
        ({"experimental": {"other/thing": {}}}, False),
        ({"experimental": {"bothost/events": {}}}, True),
        ({"extensions": {"bothost/events": {}}}, True),  # how SDK 2.x clients advertise
    ],
)
async def test_events_reach_only_clients_that_declared_them(raw, capabilities, heard):
    await raw.handshake(capabilities=capabilities)
    call = {"name": "announce", "arguments": {"summary": "hi"}}
    await raw.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    first = await raw.recv()
    if heard:
        assert first["method"] == "event/echo" and first["params"]["summary"] == "hi"
        first = await raw.recv()
    assert first["id"] == 1  # nothing else came first: no event for this client
    assert first["result"]["content"][0]["text"] == f"sent to {int(heard)}"
