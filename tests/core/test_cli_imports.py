"""A one-shot command imports what it uses (issue 19).

``bothost chat -m help`` took 1.9 s, a third of it importing aiohttp and slack_bolt for a
listener and a Slack connection the command never opens. Import time itself is measured by
``bench/cli_start.py``; here the modules are checked, which does not depend on the machine.
"""

from __future__ import annotations

import os
import subprocess
import sys

NOT_FOR_A_TERMINAL_CHAT = ("aiohttp", "slack_bolt", "slack_sdk", "psycopg")


def imported(tmp_path, *argv: str) -> set[str]:
    """Top-level modules imported by ``bothost ARGV`` (from ``python -X importtime``)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "bothost", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "BOTHOST_HOME": str(tmp_path / "home")},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def test_terminal_chat_imports_no_http_or_slack_stack(tmp_path):
    modules = imported(tmp_path, "chat", "-m", "help")
    assert "bothost" in modules  # the parsing found the imports at all
    assert not modules & set(NOT_FOR_A_TERMINAL_CHAT), sorted(modules)
