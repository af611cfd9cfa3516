"""What a person chatting in the terminal sees of an MCP server that would not start.

The runner logs every failed attempt ("restarting in 1 s", a traceback for the unexpected)
for the log file; `bothost chat` (one message or the `you>` prompt) shows none of those
records on the terminal, where they landed in the middle of an answer, but one line per
server that a turn needed and could not have, naming `bothost mcp logs NAME`. The full
records are in logs/bothost.log, as for `bothost run`.
"""

from __future__ import annotations

import os
import subprocess
import sys

import yaml

from tests.helpers import COMMAND_SECONDS, run_bothost

# a server that says why and exits at once: its first attempt fails before any turn's wait ends
CRASHING = {"command": sys.executable, "args": ["-c", "import sys; sys.exit('no key set')"]}


def config_with_a_crashing_server(tmp_path) -> str:
    config = tmp_path / "c.yaml"
    servers = {"weather": {"enabled": False}, "crash": CRASHING}
    config.write_text(yaml.safe_dump({"mcp": {"servers": servers}}))
    return str(config)


def only_the_notice(stderr: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("bothost: MCP server crash not ready (failed: "), stderr
    assert "no key set" in lines[0] and "bothost mcp logs crash" in lines[0], stderr
    assert "WARNING" not in stderr and "restarting" not in stderr


def test_chat_message_shows_one_line_for_a_failed_server(tmp_path, home):
    config = config_with_a_crashing_server(tmp_path)
    chat = run_bothost("chat", "-m", "tools", config=config, timeout=COMMAND_SECONDS)
    assert chat.returncode == 0, chat.stderr
    assert "Tools:" in chat.stdout and "crash" not in chat.stdout
    only_the_notice(chat.stderr)
    log = (home / "logs" / "bothost.log").read_text()
    assert "WARNING bothost.mcp.runner: MCP server crash: " in log and "restarting in" in log


def test_the_chat_prompt_names_a_failed_server_once(tmp_path, home):
    config = config_with_a_crashing_server(tmp_path)
    chat = subprocess.run(
        [sys.executable, "-m", "bothost", "--config", config, "chat"],
        input="tools\ntools\n",
        capture_output=True,
        text=True,
        timeout=COMMAND_SECONDS,
        env=os.environ,
    )
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout.count("Tools:") == 2
    only_the_notice(chat.stderr)
    assert "not ready" in (home / "logs" / "bothost.log").read_text()
