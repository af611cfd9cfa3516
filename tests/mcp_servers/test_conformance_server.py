"""The official MCP conformance suite's server scenarios against the kit's HTTP mode.

The weather server runs with `--http 127.0.0.1:PORT`; each scenario that applies to a
real server (not the suite's fixture tools) must pass. The verdict is read from
`checks.json`, because some scenarios print success even when they checked nothing.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import free_port
from tests.peers import conformance_js, node22

# logging-set-level applies because the kit advertises the logging capability.
SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "dns-rebinding-protection",
    "logging-set-level",
]
STARTUP_SECONDS = 30.0
SCENARIO_TIMEOUT_SECONDS = 60
STOP_SECONDS = 15.0


def _wait_listening(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"server did not listen on {port} within {STARTUP_SECONDS} s")


@pytest.fixture(scope="module")
def weather_url(tmp_path_factory):
    node22(), conformance_js()  # skip before starting a server nothing would use
    home = tmp_path_factory.mktemp("home")
    port = free_port()
    env = dict(os.environ, BOTHOST_HOME=str(home), WEATHER_API_BASE="http://127.0.0.1:9")
    log = (home / "server.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "bothost.mcp_servers.weather", "--http", f"127.0.0.1:{port}"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_listening(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            assert process.wait(timeout=STOP_SECONDS) == 0, "server did not exit cleanly"
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            log.close()


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario_passes(scenario, weather_url, tmp_path):
    node, suite = node22(), conformance_js()
    out = tmp_path / "results"
    run = subprocess.run(
        [
            str(node),
            str(suite),
            "server",
            "--url",
            weather_url,
            "--scenario",
            scenario,
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=SCENARIO_TIMEOUT_SECONDS,
    )
    found = list(Path(out).rglob("checks.json"))
    assert found, f"no checks.json\n{run.stdout}\n{run.stderr}"
    checks = json.loads(found[0].read_text())
    assert checks, f"scenario {scenario} checked nothing\n{run.stdout}"
    bad = [c for c in checks if c["status"] != "SUCCESS"]
    assert not bad, json.dumps(bad, indent=1)
    assert run.returncode == 0, run.stdout + run.stderr
