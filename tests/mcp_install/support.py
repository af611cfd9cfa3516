"""What the install and import tests share: registries that may be down, the table."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import run_bothost
from tests.peers import missing

ROOT = Path(__file__).resolve().parents[2]
ECHO_SERVER = ROOT / "tests" / "mcp_servers" / "echo_server.py"
CLI_TIMEOUT = 120  # a command that starts a server; installs get INSTALL_TIMEOUT
INSTALL_TIMEOUT = 600  # venv + pip, or npm, on a slow CI machine
PROBE_TIMEOUT = 10
NETWORK_TEST_TIMEOUT = 900  # over pytest's 180 s: an install plus calls on a busy 2-core box
REGISTRIES = {
    "pypi": "https://pypi.org/simple/mcp-server-time/",
    "npm": "https://registry.npmjs.org/@modelcontextprotocol%2Fserver-everything",
}


def needs_registry(which: str) -> None:
    """Skip locally (fail in CI) when `which` (pypi | npm) cannot be reached."""
    try:
        with urllib.request.urlopen(REGISTRIES[which], timeout=PROBE_TIMEOUT) as response:
            response.read(1)
    except OSError as exc:
        missing(f"{which} registry unreachable ({exc})")


def rows(home: Path) -> dict[str, dict]:
    """The mcp_servers table, read directly."""
    with sqlite3.connect(home / "bothost.db") as db:
        db.row_factory = sqlite3.Row
        found = {r["name"]: dict(r) for r in db.execute("SELECT * FROM mcp_servers")}
    db.close()
    return found


@dataclass
class Installed:
    """A server installed for real once for a test module, in a home of its own, so that
    each phase after the install (what it printed and stored, a call, a second install) is
    a test of its own and no single test holds the whole download and its checks."""

    home: Path
    result: subprocess.CompletedProcess[str]  # the `bothost mcp install …` run

    def bothost(self, *args: str, timeout: float = CLI_TIMEOUT) -> subprocess.CompletedProcess:
        # as the `home` fixture sets it up: this home, and no developer's own config file
        env = {k: v for k, v in os.environ.items() if k != "BOTHOST_CONFIG"}
        env["BOTHOST_HOME"] = str(self.home)
        return run_bothost(*args, home=self.home, env=env, timeout=timeout)

    def succeeded(self) -> None:
        """Fail a phase after the install with the install's own output when it failed."""
        assert self.result.returncode == 0, self.result.stderr


def install_once(tmp_path_factory, registry: str, *args: str) -> Installed:
    """``bothost mcp install ARGS`` in a new home, once (for a module-scoped fixture);
    skipped locally (failed in CI) when ``registry`` (pypi | npm) cannot be reached."""
    needs_registry(registry)
    home = tmp_path_factory.mktemp(registry) / "home"
    home.mkdir(mode=0o700)
    installed = Installed(home, subprocess.CompletedProcess([], -1, "", ""))
    installed.result = installed.bothost("mcp", "install", *args, timeout=INSTALL_TIMEOUT)
    return installed
