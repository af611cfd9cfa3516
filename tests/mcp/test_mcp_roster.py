"""The roster: config plus the mcp_servers table, with one set of shadowing rules for all."""

from __future__ import annotations

import json

from bothost.config import McpServerConfig
from bothost.mcp import stored
from bothost.mcp.roster import desired_servers, name_problem
from tests.helpers import run_bothost


def row(name, origin="cli", enabled=True, command="other"):
    return stored.StoredServer(name, McpServerConfig(command=command, enabled=enabled), origin)


def test_config_wins_a_row_of_its_name_is_shadowed_and_an_override_only_toggles():
    config = {
        "weather": McpServerConfig(command="bothost-mcp-weather"),
        "ssh": McpServerConfig(command="bothost-mcp-ssh"),
    }
    rows = {
        "weather": row("weather"),
        "ssh": row("ssh", stored.OVERRIDE, enabled=False),
        "extra": row("extra", "register_mcp"),
    }
    roster = desired_servers(config, rows)
    servers = roster.servers
    assert servers["weather"].config.command == "bothost-mcp-weather"
    assert list(roster.shadowed) == ["weather"]
    assert (servers["ssh"].origin, servers["ssh"].config.enabled) == ("config", False)
    assert servers["ssh"].config.command == "bothost-mcp-ssh"
    assert (servers["extra"].origin, servers["extra"].added_by) == ("db", "register_mcp")
    assert [s.plugin for s in servers.values()] == ["mcp:weather", "mcp:ssh", "mcp:extra"]
    assert list(desired_servers(config, rows, only={"extra"}).servers) == ["extra"]


def test_a_server_name_is_checked_in_one_place():
    assert name_problem("gmail-work_2") is None
    assert "letters, digits" in name_problem("bad name")
    assert name_problem("x" * 41) is not None


def test_plugins_and_mcp_list_agree_on_shadowed_and_overridden_servers(home):
    def bothost(*args):
        done = run_bothost(*args, home=home, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    # `mcp add` refuses a name the config has, so the row comes first and the config later
    bothost("mcp", "add", "later", "--", "other-server")
    (home / "bothost.yaml").write_text("mcp: {servers: {later: {command: configured-server}}}\n")
    bothost("mcp", "add", "extra", "--", "some-server")
    bothost("mcp", "disable", "gmail")  # already disabled: an override row, no server
    plugins = {
        p["name"]: p
        for p in json.loads(bothost("plugins", "--json"))
        if p["name"].startswith("mcp:")
    }
    listed = json.loads(bothost("mcp", "list", "--json"))
    assert plugins["mcp:later"]["origin"] == "mcp:config"
    assert plugins["mcp:extra"]["origin"] == "mcp:cli" and plugins["mcp:gmail"]["disabled"]
    assert sorted(plugins) == sorted({f"mcp:{s['name']}" for s in listed})
    assert [(s["origin"], s["state"]) for s in listed if s["name"] == "later"][1] == (
        "db",
        "shadowed",
    )
