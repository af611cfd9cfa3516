"""Long tool calls: a person's answer pauses the deadline, progress extends it to a bound.

The peer is a real stdio server (``servers/long_call_server.py``) configured with timeouts
of fractions of a second. Waiting "longer than the timeout" never sleeps: the person's
answer waits for a call to a second server, started after the question, to time out.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from mcp_helpers import SERVERS, free_port, listening, wait_for

from bothost.config import ConfigError, load
from bothost.mcp.manager import McpManager
from bothost.store import Store, core_migrations

LONG_SERVER = SERVERS / "long_call_server.py"
ECHO_SERVER = Path(__file__).resolve().parents[1] / "mcp_servers" / "echo_server.py"
WAIT = 15.0  # start() waits this long for the servers to be ready
TIMEOUT = "500ms"  # each call's timeout in these tests: short, and well above a tick


def configured(home, tmp_path, **servers: dict):
    """The named servers as read from a config file: these keys, and unless they name a
    URL, the long-call server as the command."""
    stdio = {"command": sys.executable, "args": [str(LONG_SERVER)]}
    data = {
        "mcp": {
            "servers": {
                name: keys if "url" in keys else {**stdio, **keys} for name, keys in servers.items()
            }
        }
    }
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump(data))
    config = load(path, home)
    return {name: config.mcp.servers[name] for name in servers}


@pytest.fixture
async def manager_of(home, tmp_path):
    store = Store(home / "bothost.db", core_migrations())
    managers: list[McpManager] = []

    async def make(**servers: dict) -> McpManager:
        manager = McpManager(configured(home, tmp_path, **servers), store, home, retry=False)
        managers.append(manager)
        await manager.start(wait=WAIT)
        assert {s.state for s in manager.status()} == {"ready"}
        return manager

    yield make
    for manager in managers:
        await manager.stop()
    store.close()


async def test_an_elicitation_answered_after_the_timeout_still_succeeds(manager_of):
    manager = await manager_of(sudo={"timeout": TIMEOUT}, clock={"timeout": TIMEOUT})
    waited = []

    async def ask(question):
        # the person is slow: they answer once a call with the same timeout, started after
        # the question came, has timed out
        waited.append(await manager.call_tool("clock", "quiet", {"seconds": 30}))
        return {"password": "hunter2"}

    result = await manager.call_tool("sudo", "ask", ask=ask)
    assert not result.is_error, result.text
    assert '"action": "accept"' in result.text and "hunter2" in result.text
    assert waited[0].is_error and "timed out" in waited[0].text


@pytest.fixture
async def echo_http(tmp_path):
    """The kit's echo server over Streamable HTTP: there a question names its call."""
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
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
        log.close()


async def test_over_http_a_late_answer_pauses_the_call_that_asked(manager_of, echo_http):
    manager = await manager_of(
        echo={"url": echo_http, "timeout": TIMEOUT}, clock={"timeout": TIMEOUT}
    )
    waited = []

    async def ask(question):
        waited.append(await manager.call_tool("clock", "quiet", {"seconds": 30}))
        return {"answer": "hunter2"}

    result = await manager.call_tool("echo", "ask", {"question": "Password?"}, ask=ask)
    assert not result.is_error, result.text
    assert result.text == "answer: hunter2"
    assert "timed out" in waited[0].text


async def test_progress_more_often_than_the_timeout_keeps_a_long_call_going(manager_of):
    manager = await manager_of(build={"timeout": TIMEOUT, "max_timeout": "30s"})
    # 30 ticks of 50 ms: three times the timeout, with progress ten times within it
    result = await manager.call_tool("build", "ticking", {"count": 30, "interval": 0.05})
    assert not result.is_error, result.text
    assert result.text == "ticked 30"


async def test_progress_extends_a_call_only_up_to_max_timeout(manager_of):
    manager = await manager_of(loop={"timeout": TIMEOUT, "max_timeout": "1s"})
    result = await manager.call_tool("loop", "ticking", {"count": 0, "interval": 0.05})
    assert result.is_error
    assert "max_timeout" in result.text and "1 s" in result.text, result.text


async def test_without_progress_the_timeout_still_fires(manager_of):
    manager = await manager_of(
        idle={"timeout": TIMEOUT, "max_timeout": "30s"},
        fixed={"timeout": TIMEOUT, "max_timeout": TIMEOUT},  # progress could extend nothing
    )
    for server in ("idle", "fixed"):
        result = await manager.call_tool(server, "quiet", {"seconds": 30})
        assert result.is_error and "timed out after 0.5 s" in result.text, result.text


def test_max_timeout_is_a_duration_of_at_least_the_timeout(home, tmp_path):
    server = configured(home, tmp_path, s={"timeout": "30s", "max_timeout": "2h"})["s"]
    assert server.max_timeout == 7200
    with pytest.raises(ConfigError, match=r"mcp\.servers\.s\.max_timeout: .*a duration"):
        configured(home, tmp_path, s={"max_timeout": "forever"})
    with pytest.raises(ConfigError, match=r"mcp\.servers\.s\.max_timeout: .*at least"):
        configured(home, tmp_path, s={"timeout": "5m", "max_timeout": "1m"})
