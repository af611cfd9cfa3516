"""A bundled server's start-up imports no client library it only needs for a call.

The Google libraries, aiohttp and paramiko were most of each server's start (issue 19:
~0.1-0.3 s of CPU each, paid by every `bothost run` with fourteen servers competing for two
cores). They are imported at first use now; this keeps it so. Each server is run as the
host runs it, over stdio, answers `initialize` and `tools/list`, takes its watchers' first
look (no token, no watched places, no aliases: nothing to do) and exits on end of input,
printing which of the libraries it had imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import initialize_request

LIBRARIES = (
    "aiohttp",
    "paramiko",
    "google.auth",
    "googleapiclient",
    "httplib2",
    "requests",
    "yaml",
)
# Prints what was imported when the interpreter exits (stdin closed), then runs the server.
PROGRAM = f"""
import atexit, sys
atexit.register(lambda: print("IMPORTED", [m for m in {LIBRARIES!r} if m in sys.modules],
                              file=sys.stderr, flush=True))
from bothost.mcp_servers.{{name}}.__main__ import main
sys.argv[1:] = []
main()
"""
REQUESTS = [
    initialize_request("test"),
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


@pytest.mark.parametrize("name", ["weather", "ssh", "gmail", "gcal"])
def test_a_bundled_server_starts_without_its_client_libraries(name: str, tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "BOTHOST_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM.format(name=name)],
        input="".join(json.dumps(r) + "\n" for r in REQUESTS),
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    tools = next(a["result"]["tools"] for a in answers if a.get("id") == 2)
    assert tools, done.stderr
    imported = [line for line in done.stderr.splitlines() if line.startswith("IMPORTED")]
    assert imported == ["IMPORTED []"], done.stderr[-2000:]
