"""Server push over Streamable HTTP: the kit's echo server (``--http``) pushes ``event/*``
on the GET stream, and the manager turns them into rows of ``events``."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp_helpers import free_port, listening, wait_for

from bothost.config import McpServerConfig
from bothost.mcp.environment import server_headers
from bothost.mcp.manager import McpManager
from bothost.store import Store, core_migrations
from tests.helpers import each

WAIT = 15.0  # start() waits this long for the servers to be ready or failed

ECHO_SERVER = Path(__file__).resolve().parents[1] / "mcp_servers" / "echo_server.py"


@pytest.fixture
async def echo_http(tmp_path):
    port = free_port()
    log = open(tmp_path / "echo.log", "wb")
    env = {**os.environ, "ECHO_WATCH": "1", "ECHO_POLL_SECONDS": "0.2"}
    proc = subprocess.Popen(
        [sys.executable, str(ECHO_SERVER), "--http", f"127.0.0.1:{port}"],
        stdout=log,
        stderr=log,
        env=env,
        start_new_session=True,
    )
    try:
        await wait_for(lambda: listening(port), timeout=15)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
        log.close()


async def test_http_server_push_becomes_event_rows(home, echo_http, monkeypatch):
    monkeypatch.setenv("ECHO_TOKEN", "secret-1")
    store = Store(home / "bothost.db", core_migrations())

    async def insert(source, type, payload):
        await store.run(
            lambda db: db.insert(
                "events",
                {
                    "source": source,
                    "type": type,
                    "payload": json.dumps(payload),
                    "received_at": time.time(),
                    "dedupe_key": f"{source}:{type}:{payload['id']}",
                },
            )
        )

    config = McpServerConfig(url=echo_http, headers={"Authorization": "Bearer ${env:ECHO_TOKEN}"})
    manager = McpManager({"echo": config}, store, home, on_events=each(insert))
    try:
        await manager.start(wait=WAIT)
        status = manager.status()[0]
        assert (status.state, status.transport) == ("ready", "http")
        assert (await manager.call_tool("echo", "echo", {"text": "over http"})).text == "over http"

        def rows():
            return store.call(lambda db: db.query("SELECT * FROM events ORDER BY 1"))

        await wait_for(lambda: len(rows()) >= 2)
        assert {(r["source"], r["type"]) for r in rows()} == {("echo", "event/echo_tick")}
    finally:
        await manager.stop()
        store.close()


def test_headers_resolve_env_references(monkeypatch):
    monkeypatch.setenv("ECHO_TOKEN", "t-9")
    config = McpServerConfig(url="http://x", headers={"Authorization": "Bearer ${env:ECHO_TOKEN}"})
    assert server_headers(config) == {"Authorization": "Bearer t-9"}


async def test_http_server_that_goes_away_is_failed_and_dialed_again(home, tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"

    def serve() -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, str(ECHO_SERVER), "--http", f"127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    store = Store(home / "bothost.db", core_migrations())
    manager = McpManager({"echo": McpServerConfig(url=url)}, store, home)
    proc = serve()
    try:
        await wait_for(lambda: listening(port), timeout=15)
        await manager.start(wait=WAIT)
        assert manager.status()[0].state == "ready"
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
        result = await manager.call_tool("echo", "echo", {"text": "anyone?"})
        assert result.is_error
        await wait_for(lambda: manager.status()[0].state == "failed")
        assert "unreachable" in manager.status()[0].error
        proc = serve()
        await wait_for(lambda: manager.status()[0].state == "ready", timeout=20)
        assert (await manager.call_tool("echo", "echo", {"text": "back"})).text == "back"
    finally:
        await manager.stop()
        store.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
