"""Finding the real peers tests run against (sshd, Node 22 tools, npm and PyPI MCP servers,
Chromium).

A missing peer skips the test locally; with BOTHOST_REQUIRE_PEERS=1 (set by .ci/run) it
fails instead, so CI always runs the interop tests.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PEERS_DIR = ROOT / ".peers" / "node_modules"
SDK1_VENV = ROOT / ".peers" / "mcp-sdk1"  # `make peers`: a venv holding mcp<2


def missing(what: str) -> None:
    """Skip (or, when peers are required, fail) because `what` is not installed."""
    if os.environ.get("BOTHOST_REQUIRE_PEERS") == "1":
        pytest.fail(f"required peer missing: {what}", pytrace=False)
    pytest.skip(f"peer missing: {what}")


def node22() -> Path:
    """The Node >= 22 binary from npm's `node@22` package (`make peers`)."""
    path = PEERS_DIR / ".bin" / "node"
    if not path.exists():
        missing("node@22 (run `make peers`)")
    return path


def conformance_js() -> Path:
    path = PEERS_DIR / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if not path.exists():
        missing("@modelcontextprotocol/conformance (run `make peers`)")
    return path


def conformance_next_js() -> Path:
    """The conformance suite's pre-release (`make peers` installs it as `conformance-next`)."""
    path = PEERS_DIR / "conformance-next" / "dist" / "index.js"
    if not path.exists():
        missing(
            "conformance-next, @modelcontextprotocol/conformance@0.2.0-alpha.12 (run `make peers`)"
        )
    return path


def node_server(package: str, bin_name: str) -> list[str]:
    """Command that starts the npm server `package` (installed by `make peers`) on stdio."""
    bin_path = PEERS_DIR / ".bin" / bin_name
    if not bin_path.exists():
        missing(f"{package} (run `make peers`)")
    return [str(bin_path)]


def server_everything() -> list[str]:
    """Command that starts `@modelcontextprotocol/server-everything` on stdio."""
    return node_server("@modelcontextprotocol/server-everything", "mcp-server-everything")


def python_script(name: str) -> str:
    """A console script the test extra installs beside this interpreter (mcp-server-fetch,
    mcp-server-git, mcp-server-time, uvx)."""
    path = Path(sys.executable).with_name(name)
    if not path.exists():
        missing(f"{name} (install the test extra: pip install -e '.[test]')")
    return str(path)


def mcp_sdk1_python() -> Path:
    """The Python of a venv with the official MCP SDK 1.x (`make peers`); the test extra
    has 2.x, and both cannot share one environment."""
    path = SDK1_VENV / "bin" / "python"
    if not path.exists():
        missing("the MCP Python SDK 1.x venv .peers/mcp-sdk1 (run `make peers`)")
    return path


def program(name: str, *candidates: str) -> str:
    """Path of a system program such as sshd or chromium."""
    for candidate in (name, *candidates):
        found = shutil.which(candidate) or (candidate if os.path.exists(candidate) else None)
        if found:
            return found
    missing(name)
    raise AssertionError("unreachable")
