"""`bothost mcp install` from npm, for real: server-everything listed and called."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.mcp_install.support import INSTALL_TIMEOUT, NETWORK_TEST_TIMEOUT, needs_registry, rows
from tests.peers import missing

pytestmark = [pytest.mark.network, pytest.mark.timeout(NETWORK_TEST_TIMEOUT)]


@pytest.fixture(autouse=True)
def npm():
    if shutil.which("npm") is None:
        missing("npm")
    needs_registry("npm")


def test_install_server_everything_list_and_call(bothost, home):
    installed = bothost(
        "mcp",
        "install",
        "@modelcontextprotocol/server-everything",
        "--json",
        timeout=INSTALL_TIMEOUT,
    )
    assert installed.returncode == 0, installed.stderr
    assert "npm | " in installed.stderr
    result = json.loads(installed.stdout)
    assert result["name"] == "everything" and result["kind"] == "npm"
    bin_dir = home / "mcp" / "everything" / "node_modules" / ".bin"
    assert (bin_dir / "mcp-server-everything").exists()
    assert rows(home)["everything"]["origin"] == "install"

    listed = bothost("mcp", "tools", "everything")
    assert listed.returncode == 0, listed.stderr
    assert "everything/echo" in listed.stdout

    called = bothost("mcp", "call", "everything", "echo", '{"message": "hello from bothost"}')
    assert called.returncode == 0, called.stderr
    assert "hello from bothost" in called.stdout


def test_unknown_npm_package_leaves_nothing_behind(bothost, home):
    result = bothost(
        "mcp",
        "install",
        "npm:bothost-no-such-package-zq9x",
        "--name",
        "ghost",
        timeout=INSTALL_TIMEOUT,
    )
    assert result.returncode == 1
    assert "npm has no package 'bothost-no-such-package-zq9x'" in result.stderr
    assert not (home / "mcp" / "ghost").exists()
    assert "ghost" not in rows(home)
