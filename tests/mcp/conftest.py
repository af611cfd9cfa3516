"""Fixtures for the MCP client tests: sessions on our raw test server, with their records."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bothost.mcp.serverlog import close_server_logger, server_logger
from bothost.mcp.session import ClientSession
from bothost.mcp.stdio import StdioTransport

SERVERS = Path(__file__).with_name("servers")
PAGING_SERVER = SERVERS / "paging_server.py"
WAIT = 10.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


async def wait_for(condition: Callable[[], object], timeout: float = WAIT) -> None:
    """Poll `condition` until it is true; fail after `timeout` seconds."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


class Recorder:
    """Collects what a session reports: events, tool changes, closes."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict]] = []
        self.tool_changes: list[list[dict]] = []
        self.closed: list[str] = []

    async def on_event(self, source, type, payload):
        self.events.append((source, type, payload))

    def on_tools_changed(self, tools):
        self.tool_changes.append(tools)

    def on_closed(self, reason):
        self.closed.append(reason)


@pytest.fixture
async def open_paging(home):
    """Factory: a started session on tests/mcp/servers/paging_server.py."""
    sessions: list[ClientSession] = []

    async def open_(name="paging", ask=None, max_line=None, roots=None, **env):
        recorder = Recorder()
        log = server_logger(home, name)
        environ = {"PATH": os.environ["PATH"], **{k: str(v) for k, v in env.items()}}
        kwargs = {"max_line": max_line} if max_line else {}
        transport = StdioTransport(sys.executable, [str(PAGING_SERVER)], environ, log=log,
                                   **kwargs)
        session = ClientSession(transport, name=name, log=log, media_dir=home / "media",
                                ask=ask, roots=roots, on_event=recorder.on_event,
                                on_tools_changed=recorder.on_tools_changed,
                                on_closed=recorder.on_closed)
        sessions.append(session)
        await session.start()
        return session, recorder

    yield open_
    for session in sessions:
        await session.close()
        close_server_logger(session.name)


@pytest.fixture
def quiet_logs():
    logging.getLogger("bothost").setLevel(logging.INFO)
