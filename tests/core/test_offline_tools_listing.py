"""`tools` of the offline agent, after an MCP server's group was activated in the session."""

from __future__ import annotations

from tests.helpers import run_bothost


def test_an_activated_server_is_listed_once_with_its_own_words(home):
    # found from outside, following the README: `bothost chat -m 'call mcp__weather__…'` then
    # `bothost chat -m tools` listed each weather tool as "<untrusted-content source=…>" and
    # once more under "[weather] 5 more, activated on first call"
    called = run_bothost("chat", "-m", "call mcp__weather__status {}")
    assert called.returncode == 0, called.stderr
    listed = run_bothost("chat", "-m", "tools")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    status = [line for line in lines if "mcp__weather__status" in line]
    assert status == [
        "  mcp__weather__status — The server's state: API endpoints, watched places, "
        "thresholds and active alerts."
    ], listed.stdout
    assert "untrusted-content" not in listed.stdout
    assert not any(line.startswith("  [weather]") for line in lines), listed.stdout
