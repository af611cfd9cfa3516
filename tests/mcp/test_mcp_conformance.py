"""The official MCP conformance suite's client scenarios, run against our client's driver."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from peers import conformance_js, node22

DRIVER = Path(__file__).with_name("conformance_client.py")
SCENARIOS = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"]
SUITE_TIMEOUT = 90


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario_passes_without_warnings(scenario):
    command = f"{sys.executable} {DRIVER}"  # split on spaces by the suite: no quoting possible
    assert " " not in sys.executable and " " not in str(DRIVER), "paths must not contain spaces"
    run = subprocess.run(
        [
            str(node22()),
            str(conformance_js()),
            "client",
            "--command",
            command,
            "--scenario",
            scenario,
        ],
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "0 failed, 0 warnings" in output, output
    assert "OVERALL: PASSED" in output, output
