"""A permission rule that matches no tool known now is named, with the nearest name.

Since 62ef529 server `a__b`'s tools are `mcp__a_b-63e5c1__…`: a deny written as
`mcp__a__b__wipe` before the upgrade refuses nothing, and nothing said so. The servers are
tests/mcp/servers/shifting_server.py, real stdio processes; the store is real SQLite.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path

from click.testing import CliRunner

from bothost.agent import mcp_tools
from bothost.agent.unmatched import Known, unmatched
from bothost.cli import cli
from bothost.config import PermissionRule
from bothost.rules import store as rule_store
from bothost.rules.match import CONFIG, STORED, Rule
from bothost.rules.origin import MCP, UNKNOWN, Origin
from tests.helpers import make_host, until

SHIFTING = str(Path(__file__).resolve().parents[1] / "mcp" / "servers" / "shifting_server.py")
QUIET_WEB = {"platforms": {"web": {"port": 0}, "console": {"enabled": False}}}
MADE = mcp_tools.server_part("a__b")  # a_b-63e5c1: how `a__b` is written in tool names


def server(*tools: str, enabled: bool = True) -> dict:
    return {"command": sys.executable, "args": [SHIFTING, "one", *tools], "enabled": enabled}


CONFIG_DATA = {
    "mcp": {"servers": {"a__b": server("wipe"), "off": server("wipe", enabled=False)}},
    "permissions": [
        {"tool": "mcp__a__b__wipe", "action": "deny"},  # the name before 62ef529
        {"tool": f"mcp__{MADE}__*", "action": "ask"},  # names its tools now
        {"tool": "mcp__off__wipe", "action": "deny"},  # a disabled server: not judged
    ],
    **QUIET_WEB,
}
OLD_DENY = (
    "rule permissions[0] (deny mcp__a__b__wipe) matches no tool known now"
    f" (nearest: mcp__{MADE}__wipe)"
)
STORED_DENY = "rule #1 (deny mcp__gone__wipe) matches no tool known now"


def add_stored(host, tool: str, action: str = "deny") -> int:
    spec = PermissionRule(tool=tool, action=action)
    return host.store.call(lambda db: rule_store.add(db, spec, "cli:test"))


async def test_start_up_names_each_rule_that_matches_no_tool_once_the_servers_settle(home, caplog):
    caplog.set_level(logging.WARNING, logger="bothost.host.wiring")
    host = make_host(home, CONFIG_DATA)
    add_stored(host, "mcp__gone__wipe")
    await host.start(serve_http=True, tick=False)
    try:
        await until(lambda: host.supervisor.status().get("rule names") == "done")
    finally:
        await host.stop()
    said = [r.getMessage() for r in caplog.records if r.name == "bothost.host.wiring"]
    assert said == [
        f"permission rules: {STORED_DENY}; correct its tool or remove it (bothost rules list)",
        f"permission rules: {OLD_DENY}; correct its tool or remove it (bothost rules list)",
    ]


async def test_rules_list_beside_a_running_host_names_each_rule_that_matches_no_tool(home):
    (home / "bothost.yaml").write_text(json.dumps(CONFIG_DATA))
    host = make_host(home, CONFIG_DATA)
    add_stored(host, "mcp__gone__wipe")
    runner = CliRunner()

    def listing(*more: str):
        result = runner.invoke(cli, ["--home", str(home), "rules", "list", *more])
        assert result.exit_code == 0, result.output
        return result

    await host.start(serve_http=True, tick=False)
    try:
        await host.registry.settle({"a__b"})
        result = await asyncio.to_thread(listing)
        data = json.loads((await asyncio.to_thread(listing, "--json")).stdout)
    finally:
        await host.stop()
    assert result.stderr.splitlines() == [
        f"note: {STORED_DENY}: correct its tool or remove it",
        f"note: {OLD_DENY}: correct its tool or remove it",
    ]
    assert [u["ref"] for u in data["unmatched"]] == ["#1", "permissions[0]"]
    assert data["unmatched"][1]["nearest"] == f"mcp__{MADE}__wipe"
    # no host runs: nothing lists the tools, so nothing is judged
    result = await asyncio.to_thread(listing)
    assert result.stderr == ""
    assert json.loads((await asyncio.to_thread(listing, "--json")).stdout)["unmatched"] is None


# --- the check itself, on a listing made by hand ----------------------------------------------


def rule(tool: str, action: str = "deny", ref: int = 0, origin: Origin | None = None) -> Rule:
    return Rule(PermissionRule(tool=tool, action=action), CONFIG, index=ref, tool_origin=origin)


NOW = Known(
    {
        "mcp__s__a_b_2e7336dc": Origin(MCP, "a.b", "s", "f00d"),
        "mcp__s__change": Origin(MCP, "change", "s", "f00d"),
        "status": Origin("native", "status"),
    },
    unlisted={"down"},
)


def named(*rules: Rule) -> list[str]:
    return [u.rule.ref for u in unmatched(list(rules), NOW)]


def test_a_rule_matching_a_tool_by_name_or_glob_is_not_named():
    assert named(rule("mcp__s__*"), rule("status"), rule("*__change"), rule("*")) == []


def test_a_rule_for_a_server_whose_tools_are_not_known_is_not_judged():
    assert named(rule("mcp__down__wipe"), rule("mcp__do*"), rule("mcp__*__gone")) == []
    pinned = Origin(MCP, "wipe", "down", "beef")
    assert named(rule("mcp__renamed__wipe", "allow", origin=pinned)) == []


def test_a_rule_that_matches_nothing_is_named_with_the_nearest_name_if_one_is_close():
    (typo,) = unmatched([rule("mcp__s__chnage")], NOW)
    assert typo.nearest == "mcp__s__change"
    assert typo.message.endswith("matches no tool known now (nearest: mcp__s__change)")
    (far,) = unmatched([rule("launch_missiles", ref=3)], NOW)
    assert far.nearest == "" and far.message == (
        "rule permissions[3] (deny launch_missiles) matches no tool known now"
    )


def test_a_stored_rule_is_judged_by_its_origin_as_a_call_is_matched():
    here = Origin(MCP, "a.b", "s", "f00d")
    gone = Origin(MCP, "a.b", "s", "0ld5")  # the server runs something else now
    # an allow pinned to a tool listed now matches it under its new name
    assert named(stored("mcp__s__a_b", "allow", here)) == []
    # an allow pinned to a tool no server lists matches nothing, whatever its name says
    assert named(stored("mcp__s__a_b_2e7336dc", "allow", gone)) == ["#7"]
    # a deny keeps matching by its name too
    assert named(stored("mcp__s__a_b_2e7336dc", "deny", gone)) == []
    # an allow whose origin is unknown matches nothing by design; doctor says so apart
    assert named(stored("mcp__s__a_b", "allow", Origin(UNKNOWN))) == []


def stored(tool: str, action: str, origin: Origin) -> Rule:
    return Rule(PermissionRule(tool=tool, action=action), STORED, id=7, tool_origin=origin)
