"""Finding the real peers tests run against (sshd, Node 22 tools, Chromium).

A missing peer skips the test locally; with BOTHOST_REQUIRE_PEERS=1 (set by .ci/run) it
fails instead, so CI always runs the interop tests.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PEERS_DIR = ROOT / ".peers" / "node_modules"


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


def server_everything() -> list[str]:
    """Command that starts `@modelcontextprotocol/server-everything` on stdio."""
    bin_path = PEERS_DIR / ".bin" / "mcp-server-everything"
    if not bin_path.exists():
        missing("@modelcontextprotocol/server-everything (run `make peers`)")
    return [str(bin_path)]


def program(name: str, *candidates: str) -> str:
    """Path of a system program such as sshd or chromium."""
    for candidate in (name, *candidates):
        found = shutil.which(candidate) or (candidate if os.path.exists(candidate) else None)
        if found:
            return found
    missing(name)
    raise AssertionError("unreachable")
