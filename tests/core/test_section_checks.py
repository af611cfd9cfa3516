"""Every path that loads the config refuses a section its domain refuses, naming the key path.

A bad tick rule or timetable (events), a relative root (mcp) and a permission pattern that
does not compile (rules) are checked by their own domain, not by the config package
(docs/architecture.md). This guards the move: each one-shot command, ``run`` and a running
host's reload refuse them as before, with the file and the key path in the one line.
"""

from __future__ import annotations

import pytest

from bothost.host.reload import reload
from tests.helpers import make_host, run_bothost

QUIET = "platforms: {web: {port: 0}, console: {enabled: false}}\n"
WEATHER_OFF = "mcp: {servers: {weather: {enabled: false}}}\n"


def text_of(case: str) -> str:
    """The config file of ``case``: quiet, with the bundled server off (a case's own ``mcp``
    says so itself: a second ``mcp`` key is refused)."""
    text = BAD[case][0]
    return QUIET + text + ("" if text.startswith("mcp:") else WEATHER_OFF)


BAD = {
    "tick rule": (
        "tick: {rules: [{match: {sender: x}, priority: high}]}\n",
        "tick.rules[0].match: unknown match key 'sender'",
    ),
    "tick schedule": (
        "tick: {schedules: ['0 8 * * *', '99 99 * * *']}\n",
        "tick.schedules[1]: ",
    ),
    "root": (
        "mcp: {servers: {files: {command: x, roots: [/srv, rel/dir]}, weather: {enabled: false}}}\n",
        "mcp.servers.files.roots[1]: expected an absolute path (or one starting with ~), "
        "got 'rel/dir'",
    ),
    "permission pattern": (
        "permissions: [{tool: a, action: allow}, {tool: b, action: deny, args: {cmd: 're:('}}]\n",
        "permissions[1].args.cmd: not a regular expression",
    ),
}
COMMANDS = [["config", "show"], ["doctor"], ["run"]]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("case", BAD)
def test_each_command_refuses_a_bad_section_naming_its_key_path(home, tmp_path, case, command):
    expected = BAD[case][1]
    config = tmp_path / "c.yaml"
    config.write_text(text_of(case))
    result = run_bothost(*command, home=home, config=config)
    assert result.returncode == 2, (result.returncode, result.stderr)
    line = result.stderr.rstrip("\n")
    assert "\n" not in line and "Traceback" not in line, result.stderr
    assert line.startswith(f"bothost: config error: {config}: {expected}"), line
    assert not (home / "bothost.db").exists()  # refused before anything was written


@pytest.mark.parametrize("case", BAD)
async def test_a_reload_refuses_a_bad_section_and_keeps_the_running_config(home, case):
    host = make_host(home, {"mcp": {"servers": {"weather": {"enabled": False}}}})
    try:
        config = home.parent / "edited.yaml"
        config.write_text(text_of(case))
        host.config_file = str(config)
        running = host.config
        status = await reload(host)
        assert status.error.startswith(f"{config}: {BAD[case][1]}"), status.error
        assert host.config is running
    finally:
        host.store.close()
