"""Our client against real servers: server-everything (stdio and Streamable HTTP) and
mcp-server-time from PyPI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_helpers import Recorder, free_port, listening, wait_for
from peers import server_everything

from bothost.mcp.http import HttpTransport
from bothost.mcp.serverlog import close_server_logger, server_logger
from bothost.mcp.session import ClientSession
from bothost.mcp.stdio import StdioTransport

TIME_SERVER = Path(sys.executable).with_name("mcp-server-time")


@pytest.fixture
async def everything_http(tmp_path):
    """server-everything on Streamable HTTP; yields its /mcp URL."""
    command = server_everything()  # may skip: before anything is opened that would leak
    port = free_port()
    log = open(tmp_path / "everything.log", "wb")
    try:
        proc = subprocess.Popen(
            [*command, "streamableHttp"],
            stdout=log,
            stderr=log,
            env={**os.environ, "PORT": str(port)},
            start_new_session=True,
        )
    except BaseException:
        log.close()
        raise
    try:
        await wait_for(lambda: listening(port), timeout=15)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
        log.close()


async def open_session(home, name, transport) -> tuple[ClientSession, Recorder]:
    recorder = Recorder()
    session = ClientSession(
        transport,
        name=name,
        log=transport.log,
        media_dir=home / "media",
        on_tools_changed=recorder.on_tools_changed,
        on_events=recorder.on_events,
        roots=[{"uri": "file:///tmp", "name": "tmp"}],
    )
    await session.start()
    return session, recorder


async def exercise_everything(session: ClientSession, recorder: Recorder, home: Path) -> None:
    tools = await session.refresh_tools()
    names = {t["name"] for t in tools}
    assert {"echo", "get-sum", "get-tiny-image", "get-structured-content"} <= names
    # the burst of list_changed after initialize settles into a handful of listings
    await wait_for(lambda: not session.inbound.relisting)
    assert 1 <= session.tools_list_requests <= 3
    assert recorder.tool_changes and {t["name"] for t in recorder.tool_changes[-1]} == names

    assert (await session.call_tool("echo", {"message": "hi"})).text == "Echo: hi"
    total = await session.call_tool("get-sum", {"a": 2, "b": 40})
    assert "42" in total.text and not total.is_error
    image = await session.call_tool("get-tiny-image", {})
    assert len(image.media) == 1 and image.media[0].parent == home / "media"
    assert image.media[0].read_bytes().startswith(b"\x89PNG")
    assert f"/media/{image.media[0].name}" in image.text
    structured = await session.call_tool("get-structured-content", {"location": "New York"})
    assert isinstance(structured.structured, dict) and "temperature" in structured.structured
    assert structured.text.count("temperature") == 1  # the text once, the value not added
    steps = []
    slow = await session.call_tool(
        "trigger-long-running-operation",
        {"duration": 0.3, "steps": 3},
        on_progress=lambda p, t, m: steps.append(p),
    )
    assert not slow.is_error and steps


async def test_server_everything_over_stdio(home):
    command = server_everything()  # may skip: before the logger is set up
    log = server_logger(home, "everything")
    transport = StdioTransport(command[0], [], {"PATH": os.environ["PATH"]}, log=log)
    session, recorder = await open_session(home, "everything", transport)
    try:
        await exercise_everything(session, recorder, home)
    finally:
        await session.close()
        close_server_logger("everything")


async def test_server_everything_over_streamable_http(home, everything_http):
    log = server_logger(home, "everything-http")
    session, recorder = await open_session(
        home, "everything-http", HttpTransport(everything_http, log=log)
    )
    try:
        assert session.transport.session_id
        await exercise_everything(session, recorder, home)
    finally:
        await session.close()
        close_server_logger("everything-http")


async def test_lost_http_session_is_dialed_again(home, everything_http):
    log = server_logger(home, "everything-http")
    transport = HttpTransport(everything_http, log=log)
    session, _ = await open_session(home, "everything-http", transport)
    try:
        first = session.transport.session_id
        session.transport.session_id = "forgotten-by-the-server"  # as after a server restart
        assert (await session.call_tool("echo", {"message": "again"})).text == "Echo: again"
        assert session.transport.session_id not in (None, first, "forgotten-by-the-server")
    finally:
        await session.close()
        close_server_logger("everything-http")


async def test_mcp_server_time_from_pypi(home):
    log = server_logger(home, "time")
    transport = StdioTransport(
        str(TIME_SERVER), ["--local-timezone", "UTC"], {"PATH": os.environ["PATH"]}, log=log
    )
    session, _ = await open_session(home, "time", transport)
    try:
        tools = await session.refresh_tools()
        assert {"get_current_time", "convert_time"} <= {t["name"] for t in tools}
        result = await session.call_tool("get_current_time", {"timezone": "Europe/Zurich"})
        assert not result.is_error and "Europe/Zurich" in result.text
        bad = await session.call_tool("get_current_time", {"timezone": "Mars/Olympus"})
        assert bad.is_error
    finally:
        await session.close()
        close_server_logger("time")
