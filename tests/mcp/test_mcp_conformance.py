"""The official MCP conformance suite's client scenarios, run against our client's driver."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from peers import conformance_js, node22

DRIVER = Path(__file__).with_name("conformance_client.py")
SCENARIOS = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"]
# every auth/* client scenario of the pinned suite (0.1.16): `… list --client` names them
AUTH_SCENARIOS = [
    f"auth/{name}"
    for name in (
        "metadata-default",
        "metadata-var1",
        "metadata-var2",
        "metadata-var3",
        "basic-cimd",
        "scope-from-www-authenticate",
        "scope-from-scopes-supported",
        "scope-omitted-when-undefined",
        "scope-step-up",
        "scope-retry-limit",
        "token-endpoint-auth-basic",
        "token-endpoint-auth-post",
        "token-endpoint-auth-none",
        "pre-registration",
        "2025-03-26-oauth-metadata-backcompat",
        "2025-03-26-oauth-endpoint-fallback",
        "resource-mismatch",
        "offline-access-scope",
        "offline-access-not-supported",
        "client-credentials-jwt",
        "client-credentials-basic",
        "cross-app-access-complete-flow",
    )
]
SUITE_TIMEOUT = 90


@pytest.mark.parametrize("scenario", SCENARIOS + AUTH_SCENARIOS)
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


def test_every_auth_scenario_of_the_suite_is_run():
    run = subprocess.run(
        [str(node22()), str(conformance_js()), "list", "--client"],
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT,
    )
    listed = {word for word in run.stdout.split() if word.startswith("auth/")}
    assert listed == set(AUTH_SCENARIOS)
