"""``bothost mcp resources`` and ``bothost mcp read`` through click, against
tests/mcp/servers/watched_server.py: text and ``--json``, masked as ``mcp call`` is."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from bothost.cli import cli

WATCHED = str(Path(__file__).with_name("servers") / "watched_server.py")
SECRET = "s3cret-value-for-the-note"


@pytest.fixture
def bothost(home, tmp_path, monkeypatch):
    """Run `bothost --home H --config C ARGS…`; config has the test server as `w`, whose
    note://b holds a credential from the host's environment."""
    monkeypatch.setenv("NOTE_TOKEN", SECRET)
    server = {
        "command": sys.executable,
        "args": [WATCHED],
        "env": {"RECORD": str(tmp_path / "record"), "NOTE_B": "${env:NOTE_TOKEN}"},
        "subscribe": ["note://a"],
    }
    config = tmp_path / "bothost.yaml"
    config.write_text(
        yaml.safe_dump({"mcp": {"servers": {"w": server, "weather": {"enabled": False}}}})
    )

    def run(*args: str, code: int = 0):
        result = CliRunner().invoke(cli, ["--home", str(home), "--config", str(config), *args])
        assert result.exit_code == code, (result.output, result.exception)
        return result

    return run


def test_resources_lists_resources_and_templates(bothost, tmp_path):
    assert bothost("mcp", "resources", "w").output.splitlines() == [
        "Resources of w (read one with its uri):",
        "- note://a — Note A (text/plain)",
        "- note://b — b (text/plain)",
        "- img://pixel — pixel (image/png)",
        "Resource templates of w (fill in the {…} parts, then read):",
        "- note://{name} — any note",
    ]
    listed = json.loads(bothost("mcp", "resources", "w", "--json").output)
    assert [r["uri"] for r in listed["resources"]] == ["note://a", "note://b", "img://pixel"]
    assert listed["resourceTemplates"] == [{"uriTemplate": "note://{name}", "name": "any note"}]
    # a one-shot command subscribes to nothing: an update would come after it is gone
    assert not (tmp_path / "record").exists()


def test_read_prints_text_and_json_masked(bothost):
    assert (
        bothost("mcp", "read", "w", "note://a").output == "[resource note://a]\nfirst text of A\n"
    )
    shown = bothost("mcp", "read", "w", "note://b").output
    assert SECRET not in shown and "***" in shown
    answer = json.loads(bothost("mcp", "read", "w", "note://b", "--json").output)
    (part,) = answer["contents"]
    assert part["uri"] == "note://b" and SECRET not in part["text"] and "***" in part["text"]


def test_read_saves_a_binary_part_and_says_where(bothost, home):
    result = bothost("mcp", "read", "w", "img://pixel")
    saved = [line for line in result.stderr.splitlines() if line.startswith("saved ")]
    assert len(saved) == 1 and Path(saved[0].removeprefix("saved ")).parent == home / "media"
    answer = json.loads(bothost("mcp", "read", "w", "img://pixel", "--json").output)
    assert answer["contents"][0]["mimeType"] == "image/png" and answer["contents"][0]["blob"]


def test_a_failed_read_or_an_unknown_server_exits_1(bothost):
    failed = bothost("mcp", "read", "w", "note://gone", code=1)
    assert "reading note://gone from w failed: Resource not found: note://gone" in failed.stderr
    assert "no MCP server named 'nope'" in bothost("mcp", "resources", "nope", code=1).stderr
