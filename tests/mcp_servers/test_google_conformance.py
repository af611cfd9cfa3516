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

from tests.helpers import free_port
from tests.peers import conformance_js, node22

SCENARIOS = ["server-initialize", "tools-list"]
START_SECONDS = 10.0
SCENARIO_SECONDS = 60.0


async def listening(port: int) -> None:
    async with asyncio.timeout(START_SECONDS):
        while True:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            writer.close()
            await writer.wait_closed()
            return


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
    log = (tmp_path / "server.log").open("w")
    env = {**os.environ, "BOTHOST_HOME": str(home), f"{server.upper()}_POLL_SECONDS": "3600"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        f"bothost.mcp_servers.{server}",
        "--http",
        f"127.0.0.1:{port}",
        stdout=subprocess.DEVNULL,
        stderr=log,
        env=env,
    )
    try:
        await listening(port)
        for scenario in SCENARIOS:  # one at a time: node start-up is CPU-bound
            code, output = await run_scenario(node, suite, port, scenario)
            assert code == 0 and "0 failed" in output, f"{scenario}:\n{output[-3000:]}"
    finally:
        proc.terminate()
        await proc.wait()
        log.close()
