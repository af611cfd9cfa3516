"""``bothost rules`` and the ``permissions`` config key, through the installed command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

COMMAND_TIMEOUT = 60
QUIET = (
    "platforms: {web: {port: 0}, console: {enabled: false}}\n"
    "mcp: {servers: {weather: {enabled: false}}}\n"
)
BOTHOST = Path(sys.executable).parent / "bothost"  # the installed console script


def bothost(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BOTHOST), "--home", str(home), *args],
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    "rules,expected",
    [
        ("[{tool: x, action: maybe}]", "permissions[0].action: expected one of allow, ask, deny"),
        ("[{action: deny}]", "permissions[0].tool: expected a tool name"),
        (
            "[{tool: a, action: allow}, {tool: b, action: deny, args: {cmd: 're:('}}]",
            "permissions[1].args.cmd: not a regular expression",
        ),
        ("[{tool: x, action: deny, who: {user: [U1]}}]", "permissions[0].who.user: unknown key"),
    ],
)
def test_a_bad_rule_is_a_config_error_naming_its_key_path(home, tmp_path, rules, expected):
    config = tmp_path / "bad.yaml"
    config.write_text(QUIET + f"permissions: {rules}\n")
    result = bothost(home, "--config", str(config), "config", "show")
    assert result.returncode == 2, result
    assert expected in result.stderr and str(config) in result.stderr
    assert "Traceback" not in result.stderr
