"""What `chat -m help` tells a new user works as printed on a fresh default install."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import textwrap

from bothost.config import load
from tests.helpers import run_bothost

# One CLI command: imports, migrations, the turn.
COMMAND_SECONDS = 120


def bothost(home, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTHOST_")}
    env["HOME"] = str(home.parent)
    return run_bothost(*argv, home=home, env=env, timeout=COMMAND_SECONDS)


def help_text(home) -> str:
    result = bothost(home, "chat", "-m", "help")
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_suggested_call_succeeds(tmp_path):
    home = tmp_path / "bh"
    (line,) = [line for line in help_text(home).splitlines() if "e.g. call " in line]
    command = line.partition("e.g. ")[2].strip()
    result = bothost(home, "chat", "-m", command)
    assert result.returncode == 0, result.stderr
    assert "Unknown tool" not in result.stdout and "failed" not in result.stdout, result.stdout
    db = sqlite3.connect(home / "bothost.db")
    try:
        calls = db.execute("SELECT tool, status, is_error FROM tool_calls").fetchall()
    finally:
        db.close()
    tool = command.split()[1]
    assert calls == [(tool, "ok", 0)]


def test_the_model_example_is_a_loadable_config(tmp_path, monkeypatch):
    lines = help_text(tmp_path / "bh").splitlines()
    start = next(i for i, line in enumerate(lines) if line.endswith("in bothost.yaml, e.g.")) + 1
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("  "))
    example = textwrap.dedent("\n".join(lines[start:end]))
    assert example.startswith("llm:")
    path = tmp_path / "example.yaml"
    path.write_text(example)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy")
    config = load(path, tmp_path / "home")
    assert config.llm.provider == "openai" and config.llm.api_key == "sk-dummy"
