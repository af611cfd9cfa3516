"""What the install and import tests share: registries that may be down, the table."""

from __future__ import annotations

import sqlite3
import urllib.request
from pathlib import Path

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
