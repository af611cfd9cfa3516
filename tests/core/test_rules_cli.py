"""``bothost rules`` and the ``permissions`` config key, through the installed command."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bothost.agent.mcp_tools import tool_names
from bothost.cli import cli
from bothost.rules import store as rule_store
from bothost.rules.match import PRECEDENCE, spec_from_data
from bothost.store.conn import SqliteConn

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


DANGER = '''
from bothost.hookspecs import hookimpl


def wipe_disk(target: str = "all") -> str:
    """Pretend to wipe a disk."""
    return f"wiped {target}"


@hookimpl
def register_tools(register):
    register(wipe_disk, destructive=True)
'''


@pytest.fixture
def configured(home, tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "danger.py").write_text(DANGER)
    (home / "bothost.yaml").write_text(
        QUIET
        + f"plugins: {{dirs: [{str(plugins)!r}]}}\n"
        + "permissions:\n"
        + "  - {tool: wipe_disk, args: {target: 'scratch*'}, action: allow, note: scratch}\n"
        + "  - {tool: 'wipe_*', who: {admins: false}, action: deny}\n"
    )
    return home


def test_rules_test_names_the_deciding_rule_or_the_default(configured):
    home = configured
    result = bothost(home, "rules", "test", "wipe_disk", '{"target": "scratch-1"}')
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        'allow: wipe_disk {"target": "scratch-1"}  (in console:, user '
        + result.stdout.split("user ", 1)[1].split(",", 1)[0]
        + ", an admin)",
        "  rule 1 (permissions[0], config): tool 'wipe_disk' matched 'wipe_disk'; "
        "args.target 'scratch*' matched 'scratch-1'",
        "  allowed by permission rule permissions[0] (scratch)",
    ]
    who = ["--user", "U1", "--channel", "slack:C1:1.2"]
    result = bothost(home, "rules", "test", "wipe_disk", '{"target": "db"}', *who)
    assert result.stdout.splitlines()[1:] == [
        "  rule 2 (permissions[1], config): tool 'wipe_*' matched 'wipe_disk'; who.admins false",
        "  refused by permission rule permissions[1]",
    ]
    assert "(in slack:C1:1.2, user U1, not an admin)" in result.stdout
    result = bothost(home, "rules", "test", "wipe_disk", '{"target": "db"}')
    assert result.stdout.splitlines()[1:] == [
        "  default: wipe_disk is destructive, and agent.approval is ask"
    ]


def test_rules_add_list_test_and_remove(configured):
    runner = CliRunner()

    def run(*args, code=0):
        result = runner.invoke(cli, ["--home", str(configured), *args], catch_exceptions=False)
        assert result.exit_code == code, result.output + result.stderr
        return result

    added = run("rules", "add", "wipe_disk", "deny", "--arg", "target=re:prod-.*", "--note", "no")
    assert added.stdout.strip() == "Added rule #1."
    run("rules", "add", "other", "ask", "--first", "--user", "slack:U1", "--admins")
    header, *listed = run("rules", "list").stdout.splitlines()
    assert header == f"Rules, {PRECEDENCE}:"
    assert [line.split()[:5] for line in listed] == [
        ["1", "#2", "stored", "ask", "other"],
        ["2", "#1", "stored", "deny", "wipe_disk"],
        ["3", "permissions[0]", "config", "allow", "wipe_disk"],
        ["4", "permissions[1]", "config", "deny", "wipe_*"],
    ]
    assert "who.users=slack:U1  who.admins=true" in listed[0]
    data = json.loads(run("rules", "test", "wipe_disk", '{"target": "prod-db"}', "--json").stdout)
    assert (data["action"], data["rule"]["ref"], data["rule"]["position"]) == ("deny", "#1", 2)
    assert data["reason"] == "refused by permission rule #1 (no)"
    bad = run("rules", "add", "x", "deny", "--arg", "a=re:(", code=2)
    assert "args.a: not a regular expression" in bad.stderr
    run("rules", "remove", "permissions[0]", code=2)
    assert run("rules", "remove", "#1").stdout.strip() == "Removed rule #1."
    run("rules", "remove", "1", code=1)
    run("rules", "remove", str(2**64), code=1)
    listed = json.loads(run("rules", "list", "--json").stdout)
    assert [r["ref"] for r in listed["rules"]] == ["#2", "permissions[0]", "permissions[1]"]
    assert listed["precedence"] == PRECEDENCE


CAPS_SERVER = Path(__file__).parents[1] / "agent" / "caps_server.py"


def test_rules_test_starts_an_mcp_server_for_its_tools_capabilities(home, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parents[2]))
    servers = {
        "caps": {
            "command": sys.executable,
            "args": [str(CAPS_SERVER)],
            "env_passthrough": ["PYTHONPATH"],
        },
        "weather": {"enabled": False},
    }
    (home / "bothost.yaml").write_text(json.dumps({"mcp": {"servers": servers}}))
    runner = CliRunner()
    args = ["rules", "test", "mcp__caps__send", '{"to": "a@b.c", "text": "hi"}']
    result = runner.invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith('ask: mcp__caps__send {"to": "a@b.c", "text": "hi"}')
    assert lines[1:] == [
        "  default: mcp__caps__send is egress: chosen, and agent.approval is ask",
        "  note: egress: chosen — the interlock still refuses it in a conversation that holds "
        "private data and untrusted content, whatever the rules say",
    ]
    db = SqliteConn(sqlite3.connect(home / "bothost.db", isolation_level=None))
    answer = spec_from_data({"tool": "mcp__caps__send", "action": "allow", "args": {"to": "a@b.c"}})
    rule_store.add(db, answer, "U1", kind=rule_store.ANSWER)
    db.raw.close()
    result = runner.invoke(cli, args, catch_exceptions=False)
    assert result.stdout.splitlines()[2] == (
        "  remembered answer #1 says yes instead of asking: "
        "tool 'mcp__caps__send' (tool 'send' of the server its name names) is "
        "'mcp__caps__send'; args.to 'a@b.c' matched 'a@b.c'"
    )  # stored without an origin, as a host older than core:11 does: read as an old row
    runner.invoke(cli, ["rules", "add", "mcp__*", "deny"], catch_exceptions=False)
    data = json.loads(runner.invoke(cli, [*args, "--json"], catch_exceptions=False).stdout)
    assert (data["action"], data["rule"]["ref"], data["remembered"]) == ("deny", "#2", None)


SHIFTING = Path(__file__).parents[1] / "mcp" / "servers" / "shifting_server.py"


def test_rules_add_keeps_an_mcp_tools_origin_and_list_shows_both_names(home):
    servers = {
        "s": {"command": sys.executable, "args": [str(SHIFTING), "one", "a.b"]},
        "weather": {"enabled": False},
    }
    (home / "bothost.yaml").write_text(json.dumps({"mcp": {"servers": servers}}))
    runner = CliRunner()

    def run(*args):
        result = runner.invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.stdout

    tested = json.loads(run("rules", "test", "mcp__s__a_b", "--json"))  # not a.b's name
    assert tested["action"] == "allow" and "no tool 'mcp__s__a_b'" in tested["notes"][0]
    name = tool_names("s", ["a.b", "change"])["a.b"]  # what the model sees: a_b and a hash
    assert run("rules", "add", name, "allow").strip() == "Added rule #1 (server s, tool 'a.b')."
    added = run("rules", "add", "mcp__s__nothing", "deny").strip()
    assert added == "Added rule #2 (by name only: no MCP tool is called mcp__s__nothing now)."
    assert run("rules", "add", "mcp__s__*", "ask").strip() == "Added rule #3."
    listed = run("rules", "list").splitlines()
    assert f"allow {name}  (server s, tool 'a.b')" in listed[1]  # [0]: how the order reads
    data = json.loads(run("rules", "list", "--json"))["rules"]
    assert data[0]["tool_origin"]["tool"] == "a.b" and data[1]["tool_origin"] is None
    tested = json.loads(run("rules", "test", name, "--json"))
    assert tested["action"] == "allow" and tested["rule"]["ref"] == "#1"
    assert tested["matched"][0] == f"tool {name!r} (server s, tool 'a.b') is {name!r}"


def test_rules_add_deny_names_an_allow_above_it_that_still_decides(configured):
    runner = CliRunner()

    def run(*args):
        result = runner.invoke(cli, ["--home", str(configured), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output + result.stderr
        return result

    run("rules", "add", "mcp__ssh__exec", "allow", "--arg", "command=uptime")
    run("rules", "add", "mcp__ssh__exec", "ask")
    added = run("rules", "add", "mcp__ssh__*", "deny")
    assert added.stdout.startswith("Added rule #3")
    assert added.stderr.splitlines() == [
        "note: rule #1 (allow mcp__ssh__exec, with arguments) comes before it and still "
        "decides the calls it matches: remove it (bothost rules remove 1) or add this rule "
        "with --first"
    ]
    # a deny beats the ask above it (no note), and nothing comes before a rule added first
    assert run("rules", "add", "mcp__ssh__*", "deny", "--first").stderr == ""
    assert run("rules", "add", "mcp__gmail__send", "deny").stderr == ""
