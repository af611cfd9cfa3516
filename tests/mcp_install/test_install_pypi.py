"""`bothost mcp install` from PyPI, for real: a venv of its own, then a call through the CLI."""

from __future__ import annotations

import json

import pytest

from tests.mcp_install.support import INSTALL_TIMEOUT, NETWORK_TEST_TIMEOUT, needs_registry, rows

pytestmark = [pytest.mark.network, pytest.mark.timeout(NETWORK_TEST_TIMEOUT)]


def test_install_mcp_server_time_then_call_it(bothost, home):
    needs_registry("pypi")
    installed = bothost("mcp", "install", "mcp-server-time", timeout=INSTALL_TIMEOUT)
    assert installed.returncode == 0, installed.stderr
    assert "pip | " in installed.stderr  # progress streamed while it installs
    assert "time/get_current_time" in installed.stdout
    script = home / "mcp" / "time" / "venv" / "bin" / "mcp-server-time"
    assert script.exists()

    row = rows(home)["time"]
    assert row["origin"] == "install" and row["command"] == str(script)
    record = json.loads(row["install"])
    assert record["kind"] == "pypi" and record["package"] == "mcp-server-time"

    called = bothost("mcp", "call", "time", "get_current_time", '{"timezone": "UTC"}')
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["timezone"] == "UTC"

    again = bothost("mcp", "install", "mcp-server-time")
    assert again.returncode == 1
    assert "named 'time' exists (added by install)" in again.stderr
    assert script.exists()  # the refused install touched nothing


def test_unknown_pypi_package_leaves_nothing_behind(bothost, home):
    needs_registry("pypi")
    result = bothost("mcp", "install", "bothost-no-such-package-zq9x", timeout=INSTALL_TIMEOUT)
    assert result.returncode == 1
    assert "PyPI has no package 'bothost-no-such-package-zq9x'" in result.stderr
    assert not (home / "mcp" / "bothost-no-such-package-zq9x").exists()
    assert "bothost-no-such-package-zq9x" not in rows(home)
