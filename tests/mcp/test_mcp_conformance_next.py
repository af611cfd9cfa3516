"""The conformance suite's pre-release (0.2.0-alpha.12) against our client's driver: the
RFC 9207 ``iss`` scenarios and SEP-837's ``application_type`` at registration.

The ``auth/iss-*`` scenarios belong to revision 2026-07-28; forced at 2025-11-25, the
revision the client negotiates, each passes whole. The suite checks ``application_type``
only at 2026-07-28 (it does not ask it of a registration at an earlier revision), so the
``iss`` scenarios, which all register dynamically, run there too. There the client's OAuth
checks must all pass, but the scenario as a whole may not yet: after logging in, the mock
server speaks 2026-07-28's wire (no ``initialize``), which the client does not.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from peers import conformance_next_js, node22

DRIVER = Path(__file__).with_name("conformance_client.py")
SUITE_TIMEOUT = 90
# scenario -> the check it exists for (RFC 9207 §2.4 as SEP-2468 puts it)
ISS_SCENARIOS = {
    "auth/iss-supported": "sep-2468-client-compare-iss-supported",
    "auth/iss-not-advertised": "sep-2468-client-proceed-no-iss",
    "auth/iss-supported-missing": "sep-2468-client-reject-missing-iss",
    "auth/iss-wrong-issuer": "sep-2468-client-compare-iss-supported",
    "auth/iss-unexpected": "sep-2468-client-compare-iss-unadvertised",
    "auth/iss-normalized": "sep-2468-client-no-normalization",
}
APPLICATION_TYPE = "sep-837-application-type-present"


def run_scenario(scenario: str, spec_version: str, out: Path) -> list[dict]:
    """Run one client scenario; the suite's checks, read from the results it saves. None
    may fail or warn; at 2025-11-25 the run must pass whole (see module docstring)."""
    command = f"{sys.executable} {DRIVER}"  # split on spaces by the suite: no quoting possible
    assert " " not in sys.executable and " " not in str(DRIVER), "paths must not contain spaces"
    args = [str(node22()), str(conformance_next_js()), "client", "--command", command]
    args += ["--scenario", scenario, "--spec-version", spec_version, "-o", str(out)]
    if spec_version == "2025-11-25":
        args.append("--force")  # the iss scenarios are 2026-07-28's
    run = subprocess.run(args, capture_output=True, text=True, timeout=SUITE_TIMEOUT)
    output = run.stdout + run.stderr
    found = sorted(out.rglob("checks.json"))
    assert len(found) == 1, output
    checks = json.loads(found[0].read_text())
    failed = [c for c in checks if c["status"] in ("FAILURE", "WARNING")]
    assert not failed, json.dumps(failed, indent=1)
    if spec_version == "2025-11-25":
        assert run.returncode == 0 and "OVERALL: PASSED" in output, output
    return checks


def passed(checks: list[dict], check: str) -> bool:
    return any(c["id"] == check and c["status"] == "SUCCESS" for c in checks)


@pytest.mark.parametrize("spec_version", ["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("scenario", sorted(ISS_SCENARIOS))
def test_the_authorization_responses_iss_is_checked(scenario, spec_version, tmp_path):
    checks = run_scenario(scenario, spec_version, tmp_path)
    assert passed(checks, ISS_SCENARIOS[scenario]), json.dumps(checks, indent=1)
    if spec_version == "2026-07-28":
        assert passed(checks, APPLICATION_TYPE), json.dumps(checks, indent=1)


def test_registration_names_the_application_type(tmp_path):
    checks = run_scenario("auth/metadata-default", "2026-07-28", tmp_path)
    registered = [c for c in checks if c["id"] == APPLICATION_TYPE]
    assert [c["details"]["application_type"] for c in registered] == ["native"], registered
