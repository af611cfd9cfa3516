"""Nothing leaks when an HTTP server is not there or dies mid-call: no future whose exception
nobody retrieved, no unclosed aiohttp session (both reported only through asyncio's logger
and ResourceWarning at garbage collection, so the tests collect and look)."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import subprocess
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

import pytest
from aiohttp import web
from mcp_helpers import free_port, listening, wait_for

from bothost.config import McpServerConfig
from bothost.mcp.http import HttpTransport
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.manager import McpManager
from bothost.mcp.serverlog import close_server_logger, server_logger
from bothost.mcp.session import ClientSession
from bothost.store import Store, core_migrations
from tests.helpers import serve_app

ECHO_SERVER = Path(__file__).resolve().parents[1] / "mcp_servers" / "echo_server.py"
LEAKS = ("never retrieved", "Unclosed", "unclosed", "was destroyed but it is pending")


@contextmanager
def no_leaks(caplog):
    """Fail if what ran inside leaked a future or a session (seen once garbage collected)."""
    caplog.set_level(logging.ERROR, logger="asyncio")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
        gc.collect()
    leaked = [r.getMessage() for r in caplog.records if r.name == "asyncio"]
    leaked += [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert not [m for m in leaked if any(word in m for word in LEAKS)], leaked


async def test_a_refused_url_leaks_no_future(home, caplog):
    url = f"http://127.0.0.1:{free_port()}/mcp"  # nobody listens there
    with no_leaks(caplog):
        log = server_logger(home, "gone")
        session = ClientSession(HttpTransport(url, log=log), name="gone", log=log)
        with pytest.raises(McpError, match="unreachable"):
            await session.start()
        await session.close()
        del session
        close_server_logger("gone")


async def test_a_refused_url_in_the_manager_leaks_nothing(home, caplog):
    store = Store(home / "bothost.db", core_migrations())
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with no_leaks(caplog):
        manager = McpManager({"gone": McpServerConfig(url=url)}, store, home, retry=False)
        await manager.start(wait=10)
        assert manager.runners["gone"].state == "failed"
        await manager.stop()
        del manager
    store.close()


@pytest.fixture
async def echo_http(tmp_path):
    """The kit's echo server over Streamable HTTP: (URL, process)."""
    port = free_port()
    log = open(tmp_path / "echo.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, str(ECHO_SERVER), "--http", f"127.0.0.1:{port}"],
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    try:
        await wait_for(lambda: listening(port), timeout=15)
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
        log.close()


async def test_a_server_that_dies_mid_call_leaks_no_session(home, caplog, echo_http):
    url, proc = echo_http
    store = Store(home / "bothost.db", core_migrations())
    with no_leaks(caplog):
        manager = McpManager({"echo": McpServerConfig(url=url)}, store, home)
        await manager.start(wait=15)
        steps: list[int] = []
        call = asyncio.ensure_future(
            manager.call_tool(
                "echo", "slow", {"seconds": 30}, on_progress=lambda *a: steps.append(1)
            )
        )
        await wait_for(lambda: steps)
        os.killpg(proc.pid, signal.SIGKILL)
        async with asyncio.timeout(10):
            result = await call
        assert result.is_error
        await manager.stop()
        del manager, call
    store.close()


@pytest.fixture
async def hanging_delete():
    """A minimal Streamable HTTP server that issues a session and never answers DELETE
    (a server that hangs as it goes away); yields (URL, event set once DELETE came)."""
    deleting, released = asyncio.Event(), asyncio.Event()

    async def post(request):
        message = await request.json()
        if "id" not in message:
            return web.Response(status=202)
        result = {}
        if message["method"] == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {},
                "serverInfo": {"name": "hangs", "version": "1"},
            }
        body = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        return web.json_response(body, headers={"Mcp-Session-Id": "s1"})

    async def delete(request):
        deleting.set()
        await released.wait()  # until the test is over

    app = web.Application()
    app.add_routes([web.post("/mcp", post), web.delete("/mcp", delete)])
    runner, url = await serve_app(app)
    yield f"{url}/mcp", deleting
    released.set()
    await runner.cleanup()


async def test_a_close_cut_short_still_closes_the_http_session(home, caplog, hanging_delete):
    url, deleting = hanging_delete
    with no_leaks(caplog):
        log = server_logger(home, "hangs")
        session = ClientSession(HttpTransport(url, log=log), name="hangs", log=log)
        await session.start()
        closing = asyncio.ensure_future(session.close())
        await wait_for(deleting.is_set)
        closing.cancel()  # e.g. the manager stopping a server that is closing already
        with pytest.raises(asyncio.CancelledError):
            await closing
        # (what the collector would report, unless something still holds the session)
        assert session.transport._http.closed
        del session, closing
        close_server_logger("hangs")
