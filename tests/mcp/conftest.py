"""Fixtures for the MCP client tests: sessions on our raw test server, with their records."""

from __future__ import annotations

import logging
import os
import sys

import pytest
from mcp_helpers import PAGING_SERVER, Recorder

from bothost.mcp.serverlog import close_server_logger, server_logger
from bothost.mcp.session import ClientSession
from bothost.mcp.stdio import StdioTransport


@pytest.fixture
async def open_paging(home):
    """Factory: a started session on tests/mcp/servers/paging_server.py."""
    sessions: list[ClientSession] = []

    async def open_(name="paging", ask=None, max_line=None, roots=None, **env):
        recorder = Recorder()
        log = server_logger(home, name)
        environ = {"PATH": os.environ["PATH"], **{k: str(v) for k, v in env.items()}}
        kwargs = {"max_line": max_line} if max_line else {}
        transport = StdioTransport(sys.executable, [str(PAGING_SERVER)], environ, log=log, **kwargs)
        session = ClientSession(
            transport,
            name=name,
            log=log,
            media_dir=home / "media",
            ask=ask,
            roots=roots,
            on_events=recorder.on_events,
            on_tools_changed=recorder.on_tools_changed,
            on_closed=recorder.on_closed,
        )
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
