"""Which servers may state their tools' capabilities exactly (bothost.mcp.bundled)."""

import sys
from pathlib import Path

from bothost.config import McpServerConfig
from bothost.mcp.bundled import is_bundled


def test_a_bundled_server_is_known_by_what_runs_not_by_its_name(tmp_path, monkeypatch):
    beside = Path(sys.executable).parent / "bothost-mcp-weather"
    assert beside.exists()  # installed with bothost, beside this interpreter
    assert is_bundled(McpServerConfig(command=str(beside)))
    module = McpServerConfig(command=sys.executable, args=["-m", "bothost.mcp_servers.gmail"])
    assert is_bundled(module)
    # a script of the same name elsewhere on PATH, a module not ours, a URL: anybody's
    impostor = tmp_path / "bothost-mcp-weather"
    impostor.write_text("#!/bin/sh\n")
    impostor.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert not is_bundled(McpServerConfig(command="bothost-mcp-weather"))
    assert not is_bundled(McpServerConfig(command=str(impostor)))
    other = McpServerConfig(command=sys.executable, args=["-m", "evil.mcp_servers.gmail"])
    assert not is_bundled(other)
    assert not is_bundled(McpServerConfig(command=sys.executable, args=["server.py"]))
    assert not is_bundled(McpServerConfig(url="http://127.0.0.1:1/mcp"))
