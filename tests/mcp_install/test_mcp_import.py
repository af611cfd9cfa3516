"""`bothost mcp import`: Claude Desktop, Cursor and VS Code files, what is added and skipped."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

import bothost.cli.mcp_install  # noqa: F401  (in-process runs; the wiring is tested below)
from bothost.cli import cli
from tests.helpers import free_port
from tests.mcp_install.support import ECHO_SERVER, rows

STARTUP = 10.0


@pytest.fixture
def run(home):
    runner = CliRunner()

    def invoke(*args: str, code: int = 0):
        result = runner.invoke(cli, ["--home", str(home), *args], catch_exceptions=False)
        assert result.exit_code == code, result.output + result.stderr
        return result

    return invoke


def write(tmp_path, name: str, data) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


@pytest.fixture
def echo_url(tmp_path):
    """The echo test server over Streamable HTTP on an ephemeral port."""
    port = free_port()
    log = (tmp_path / "echo-http.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, str(ECHO_SERVER), "--http", f"127.0.0.1:{port}"],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
    )
    deadline = time.monotonic() + STARTUP
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "echo server did not start"
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp"
    process.terminate()
    process.wait(timeout=STARTUP)
    log.close()


def test_cli_offers_install_and_import(bothost):
    shown = bothost("mcp", "--help")
    assert shown.returncode == 0
    assert "install " in shown.stdout and "import " in shown.stdout, (
        "bothost/cli/__init__.py must import bothost.cli.mcp_install"
    )


def test_claude_desktop_config_imported_and_called(bothost, home, tmp_path):
    config = write(
        tmp_path,
        "claude_desktop_config.json",
        {
            "mcpServers": {
                "echo": {
                    "command": sys.executable,
                    "args": [str(ECHO_SERVER)],
                    "env": {"ECHO_POLL_SECONDS": 3600},
                },
                "broken": {"args": ["--no-command"]},
            }
        },
    )
    imported = bothost("mcp", "import", config)
    assert imported.returncode == 0, imported.stderr
    assert f"added echo (stdio: {sys.executable} {ECHO_SERVER})" in imported.stdout
    assert "skipped broken: invalid entry: no `command` (stdio) or `url` (HTTP)" in imported.stdout
    row = rows(home)["echo"]
    assert row["origin"] == "import" and json.loads(row["env"]) == {"ECHO_POLL_SECONDS": "3600"}

    called = bothost("mcp", "call", "echo", "echo", '{"text": "imported", "times": 2}')
    assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == "imported imported"


def test_cursor_url_entry_reaches_the_server(bothost, home, tmp_path, echo_url, monkeypatch):
    config = write(
        tmp_path,
        "mcp.json",
        {
            "mcpServers": {
                "remote echo": {"url": echo_url, "headers": {"X-Token": "${env:ECHO_TOKEN}"}},
            }
        },
    )
    imported = bothost("mcp", "import", config, "--json")
    assert imported.returncode == 0, imported.stderr
    report = json.loads(imported.stdout)
    assert [(e["name"], e["transport"], e["target"]) for e in report["added"]] == [
        ("remote-echo", "http", echo_url)
    ]
    assert report["added"][0]["note"] == "renamed from 'remote echo'"
    assert json.loads(rows(home)["remote-echo"]["headers"]) == {"X-Token": "${env:ECHO_TOKEN}"}

    env = {**os.environ, "ECHO_TOKEN": "t0k3n"}
    called = bothost("mcp", "call", "remote-echo", "add", '{"a": 2, "b": 3}', env=env)
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["sum"] == 5


def test_vscode_mcp_json_skips_sse_and_inputs(run, home, tmp_path):
    config = write(
        tmp_path,
        "mcp.json",
        {
            "inputs": [{"type": "promptString", "id": "token", "password": True}],
            "servers": {
                "echo": {"type": "stdio", "command": sys.executable, "args": [str(ECHO_SERVER)]},
                "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
                "github": {
                    "type": "http",
                    "url": "https://api.example.com/mcp",
                    "headers": {"Authorization": "Bearer ${input:token}"},
                },
                "workspace": {"command": "node", "args": ["${workspaceFolder}/server.js"]},
            },
        },
    )
    out = run("mcp", "import", config).stdout
    assert "added echo (stdio:" in out
    assert "skipped legacy: transport sse is not supported" in out
    assert "skipped github: headers.Authorization uses the VS Code input ${input:token}" in out
    assert "skipped workspace: args[0] uses ${workspaceFolder}" in out
    assert set(rows(home)) == {"echo"}


def test_vscode_settings_with_comments(run, home, tmp_path):
    settings = write(
        tmp_path,
        "settings.json",
        """{
        // editor settings first
        "editor.fontSize": 13,
        "mcp": {
            "servers": {
                /* the one we want */
                "echo": {"command": "python3", "args": ["-c", "print('//not a comment')"],},
            },
        },
    }""",
    )
    report = json.loads(run("mcp", "import", settings, "--json").stdout)
    assert report["format"] == "mcp.servers"
    assert [e["name"] for e in report["added"]] == ["echo"]
    assert json.loads(rows(home)["echo"]["args"]) == ["-c", "print('//not a comment')"]


def test_dry_run_and_taken_names(run, home, tmp_path):
    config = write(
        tmp_path,
        "claude.json",
        {
            "mcpServers": {
                "weather": {"command": "other-weather"},  # the packaged config's server
                "echo": {"command": sys.executable, "args": [str(ECHO_SERVER)]},
            }
        },
    )
    dry = run("mcp", "import", config, "--dry-run")
    assert "would add echo" in dry.stdout
    assert "skipped weather: a server named 'weather' exists (the config file)" in dry.stdout
    assert not (home / "bothost.db").exists() or rows(home) == {}

    run("mcp", "import", config)
    again = run("mcp", "import", config).stdout
    assert "skipped echo: a server named 'echo' exists (added by import)" in again


def test_file_without_servers_is_an_error(run, tmp_path):
    result = run("mcp", "import", write(tmp_path, "x.json", {"theme": "dark"}), code=2)
    assert "has no MCP servers" in result.stderr
    result = run("mcp", "import", write(tmp_path, "y.json", "{not json"), code=2)
    assert "is not JSON" in result.stderr
    # found from outside: a file nested 100,000 deep ended in "unexpected RecursionError"
    deep = '{"mcpServers": ' + "[" * 100_000 + "]" * 100_000 + "}"
    result = run("mcp", "import", write(tmp_path, "z.json", deep), code=2)
    assert "is not JSON" in result.stderr and "nested too deeply" in result.stderr


def test_a_tools_allowlist_is_kept_and_a_missing_tool_is_warned_about(bothost, home, tmp_path):
    server = {"command": sys.executable, "args": [str(ECHO_SERVER)]}
    config = write(
        tmp_path,
        "claude.json",
        {"mcpServers": {"echo": {**server, "tools": ["echo", "no_such_tool"]}}},
    )
    imported = bothost("mcp", "import", config)
    assert imported.returncode == 0, imported.stderr
    assert "only tools echo, no_such_tool" in imported.stdout
    assert json.loads(rows(home)["echo"]["tools"]) == ["echo", "no_such_tool"]

    listed = bothost("mcp", "tools", "echo")
    assert listed.returncode == 0, listed.stderr
    assert "echo" in listed.stdout and "add" not in listed.stdout.split()
    assert "allowlist names no_such_tool, which the server does not offer" in listed.stderr
