"""The gmail and gcal servers in `--http` mode against the official conformance scenarios.

Only what these servers add to the kit is checked here (the kit's own tests cover ping,
logging and Host/Origin checks): the handshake with their identity and instructions, and
their tool definitions. No Google token is needed: neither scenario calls a tool.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from tests.helpers import COMMAND_SECONDS, free_port
from tests.peers import conformance_js, node22

SCENARIOS = ["server-initialize", "tools-list"]
READY = b" serving on http://"  # the line mcp_servers/kit/http.py logs once it listens
# Only against a hang: the start is waited for by its ready line (or the process's end), not
# timed; a 10 s bound on the port answering failed once at load 12.
HANG_SECONDS = COMMAND_SECONDS
SCENARIO_SECONDS = 60.0


async def ready(proc: asyncio.subprocess.Process, log) -> asyncio.Task:
    """Wait until the server says it is serving; the task that copies the rest of its
    stderr to ``log``. A server that exits first fails the test with what it said."""
    assert proc.stderr is not None
    serving = asyncio.Event()

    async def copy() -> None:
        async for line in proc.stderr:
            log.write(line)
            log.flush()
            if READY in line:
                serving.set()

    copying = asyncio.create_task(copy())
    async with asyncio.timeout(HANG_SECONDS):
        await asyncio.wait(
            [copying, asyncio.create_task(serving.wait())], return_when=asyncio.FIRST_COMPLETED
        )
    if not serving.is_set():
        await copying
        raise AssertionError(f"the server ended before serving: {log.name}")
    return copying


async def run_scenario(node, suite, port: int, scenario: str) -> tuple[int, str]:
    run = await asyncio.create_subprocess_exec(
        str(node),
        str(suite),
        "server",
        "--url",
        f"http://127.0.0.1:{port}/mcp",
        "--scenario",
        scenario,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    async with asyncio.timeout(SCENARIO_SECONDS):
        output, _ = await run.communicate()
    return run.returncode, output.decode()


@pytest.mark.parametrize("server", ["gmail", "gcal"])
async def test_http_mode_passes_the_conformance_scenarios(server, home, tmp_path):
    node, suite = node22(), conformance_js()
    port = free_port()
    log = (tmp_path / "server.log").open("wb")
    env = {**os.environ, "BOTHOST_HOME": str(home), f"{server.upper()}_POLL_SECONDS": "3600"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        f"bothost.mcp_servers.{server}",
        "--http",
        f"127.0.0.1:{port}",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    copying = None
    try:
        copying = await ready(proc, log)
        for scenario in SCENARIOS:  # one at a time: node start-up is CPU-bound
            code, output = await run_scenario(node, suite, port, scenario)
            assert code == 0 and "0 failed" in output, f"{scenario}:\n{output[-3000:]}"
    finally:
        if proc.returncode is None:
            proc.terminate()
        await proc.wait()
        if copying is not None:
            await copying
        log.close()
