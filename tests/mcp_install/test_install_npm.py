"""`bothost mcp install` from npm, for real: server-everything listed and called.

The install is done once for the module (npm's download is most of the time here) and each
phase after it is a test of its own, as in test_install_pypi.py: what the install printed
and stored, the tools listed, a call. Run alone, each still does the install first; none
changes what the next one sees.
"""

from __future__ import annotations

import json
import shutil

import pytest

from tests.mcp_install.support import (
    INSTALL_TIMEOUT,
    NETWORK_TEST_TIMEOUT,
    Installed,
    install_once,
    needs_registry,
    rows,
)
from tests.peers import missing

pytestmark = [pytest.mark.network, pytest.mark.timeout(NETWORK_TEST_TIMEOUT)]


@pytest.fixture(autouse=True, scope="module")
def npm():
    if shutil.which("npm") is None:
        missing("npm")
    needs_registry("npm")


@pytest.fixture(scope="module")
def everything_installed(npm, tmp_path_factory) -> Installed:
    return install_once(
        tmp_path_factory, "npm", "@modelcontextprotocol/server-everything", "--json"
    )


def test_install_server_everything_says_its_steps_and_records_the_server(everything_installed):
    everything_installed.succeeded()
    installed = everything_installed.result
    assert "npm | " not in installed.stderr  # a line per step; npm's own with -v
    result = json.loads(installed.stdout)
    assert result["name"] == "everything" and result["kind"] == "npm"
    bin_dir = everything_installed.home / "mcp" / "everything" / "node_modules" / ".bin"
    assert (bin_dir / "mcp-server-everything").exists()
    assert rows(everything_installed.home)["everything"]["origin"] == "install"


def test_the_installed_server_lists_its_tools(everything_installed):
    everything_installed.succeeded()
    listed = everything_installed.bothost("mcp", "tools", "everything")
    assert listed.returncode == 0, listed.stderr
    assert "everything/echo" in listed.stdout


def test_the_installed_server_answers_a_call(everything_installed):
    everything_installed.succeeded()
    called = everything_installed.bothost(
        "mcp", "call", "everything", "echo", '{"message": "hello from bothost"}'
    )
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
