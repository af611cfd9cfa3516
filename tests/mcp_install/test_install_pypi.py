"""`bothost mcp install` from PyPI, for real: a venv of its own, then a call through the CLI.

The install is done once for the module (a venv and a pip run are most of the time here)
and each phase after it is a test of its own: what the install printed and stored, a call
to the installed server, a second install refused. Run alone, each still does the install
first; no test changes what the next one sees (the refused install touches nothing).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.mcp_install.support import (
    INSTALL_TIMEOUT,
    NETWORK_TEST_TIMEOUT,
    Installed,
    install_once,
    needs_registry,
    rows,
)

pytestmark = [pytest.mark.network, pytest.mark.timeout(NETWORK_TEST_TIMEOUT)]


def script(home: Path) -> Path:
    return home / "mcp" / "time" / "venv" / "bin" / "mcp-server-time"


@pytest.fixture(scope="module")
def time_installed(tmp_path_factory) -> Installed:
    return install_once(tmp_path_factory, "pypi", "mcp-server-time")


def test_install_mcp_server_time_says_its_steps_and_records_the_server(time_installed):
    time_installed.succeeded()
    installed = time_installed.result
    assert "pip | " not in installed.stderr  # a line per step; pip's own with -v
    assert "time/get_current_time" in installed.stdout
    assert script(time_installed.home).exists()

    row = rows(time_installed.home)["time"]
    assert row["origin"] == "install" and row["command"] == str(script(time_installed.home))
    record = json.loads(row["install"])
    assert record["kind"] == "pypi" and record["package"] == "mcp-server-time"


def test_the_installed_server_answers_a_call(time_installed):
    time_installed.succeeded()
    called = time_installed.bothost(
        "mcp", "call", "time", "get_current_time", '{"timezone": "UTC"}'
    )
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["timezone"] == "UTC"


def test_installing_it_again_is_refused_and_touches_nothing(time_installed):
    time_installed.succeeded()
    again = time_installed.bothost("mcp", "install", "mcp-server-time")
    assert again.returncode == 1
    assert "named 'time' exists (added by install)" in again.stderr
    assert script(time_installed.home).exists()  # the refused install touched nothing


def test_unknown_pypi_package_leaves_nothing_behind(bothost, home):
    needs_registry("pypi")
    result = bothost("mcp", "install", "bothost-no-such-package-zq9x", timeout=INSTALL_TIMEOUT)
    assert result.returncode == 1
    assert "PyPI has no package 'bothost-no-such-package-zq9x'" in result.stderr
    assert not (home / "mcp" / "bothost-no-such-package-zq9x").exists()
    assert "bothost-no-such-package-zq9x" not in rows(home)
