"""An approval is about one tool, by its origin: no change a server or the config can make
hands it to another tool.

Remembered answers and stored rules name a tool by its origin (the server's name, what it
runs, the tool's own name: bothost/rules/origin.py), not by the name the model sees, which
another tool can come to hold. The servers are tests/mcp/servers/shifting_server.py, real
stdio processes whose tools change through notifications/tools/list_changed; each is run
on both store backends.
"""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bothost.agent import mcp_tools
from bothost.cli import cli
from bothost.models import Address, IncomingMessage
from bothost.platform import ALLOW_CONVERSATION
from bothost.rules import store as rule_store
from bothost.rules.origin import MCP, Origin, parse
from bothost.store import Store, core_migrations
from tests.agent.conftest import AskingPlatform
from tests.conftest import both_backends
from tests.fakes.llm import last_tool_result
from tests.helpers import make_host, until

pytestmark = both_backends

QUIET_WEB = {"platforms": {"web": {"port": 0}, "console": {"enabled": False}}}
SHIFTING = str(Path(__file__).resolve().parents[1] / "mcp" / "servers" / "shifting_server.py")


def server(flavour: str, *tools: str) -> dict:
    return {"command": sys.executable, "args": [SHIFTING, flavour, *tools]}


def call(tool, **arguments):
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def echo(body):
    return {"text": last_tool_result(body)}


@asynccontextmanager
async def running(home, fake_llm, store_target, servers, **more):
    host = make_host(
        home,
        {
            "llm": fake_llm.openai_config(),
            "store": {"url": str(store_target)},
            "mcp": {"servers": servers},
            **more,
        },
    )
    await host.start(serve_http=False, tick=False)
    try:
        await host.registry.settle(set(servers))
        yield host
    finally:
        await host.stop()


def names(host, server="s") -> list[str]:
    return sorted(t.name for t in host.registry.group_tools(server))


def originals(host, server="s") -> list[str]:
    """The server's tools by their own names (their origins')."""
    return [t.where_from().tool for t in host.registry.group_tools(server)]


async def turn(host, fake_llm, platform, *steps, conversation="c1"):
    fake_llm.script = [*steps, echo]
    message = IncomingMessage(address=Address("test", conversation), text="go", user="u1")
    return (await host.handle_message(message, platform=platform)).text


def activate(*groups):
    return call("activate_tools", groups=list(groups))


async def approve(host, fake_llm, tool, group="s"):
    """Allow `tool` for conversation c1, as a person answering the question would."""
    platform = AskingPlatform((ALLOW_CONVERSATION, "u1"))
    reply = await turn(host, fake_llm, platform, activate(group), call(tool))
    assert "called" in reply and len(platform.questions) == 1
    platform.answer = False  # from now on a question is refused
    return platform


async def test_a_tool_taking_an_approved_name_after_list_changed_is_asked(
    home, fake_llm, store_target
):
    async with running(home, fake_llm, store_target, {"s": server("one")}) as host:
        (dotted,) = [n for n in names(host) if not n.endswith("__change")]  # `a.b`, hashed
        platform = await approve(host, fake_llm, dotted)
        # the server drops `a.b` and lists a tool named exactly as `a.b` was shown
        forged = dotted.removeprefix("mcp__s__")
        await host.mcp.call_tool("s", "change", {"remove": ["a.b"], "add": [forged]})
        await until(lambda: forged in originals(host))  # the re-listing after list_changed
        assert "a.b" not in originals(host)
        # it is not even given that name (see the config rule test below), and whatever
        # name it has, the answer given for `a.b` is not its answer
        (alike,) = [t.name for t in host.registry.group_tools("s") if t.origin.tool == forged]
        reply = await turn(host, fake_llm, platform, call(alike))
        assert "said no" in reply and "called" not in reply
        assert len(platform.questions) == 2
        # a tool renamed by its server (`a.b` is gone, `c.d` is new) is asked about too
        await host.mcp.call_tool("s", "change", {"add": ["c.d"]})
        await until(lambda: "c.d" in originals(host))
        (renamed,) = [n for n in names(host) if n.startswith("mcp__s__c_d")]
        reply = await turn(host, fake_llm, platform, call(renamed))
        assert "said no" in reply and len(platform.questions) == 3


@pytest.mark.parametrize(
    "after",
    [
        {"s": server("two", "wipe"), "t": server("one", "wipe")},  # the two swap names
        {"r": server("one", "wipe"), "s": server("two", "wipe")},  # renamed, its name reused
    ],
    ids=["swapped", "renamed"],
)
async def test_an_approval_stays_with_its_server_when_server_names_change_in_config(
    home, fake_llm, store_target, after
):
    before = {"s": server("one", "wipe"), "t": server("two", "wipe")}
    async with running(home, fake_llm, store_target, before) as host:
        await approve(host, fake_llm, "mcp__s__wipe")
    async with running(home, fake_llm, store_target, after) as host:
        platform = AskingPlatform(False)
        reply = await turn(host, fake_llm, platform, activate(*after), call("mcp__s__wipe"))
        # server s now runs the other program: the approval given for `one` is not its
        assert "said no" in reply and "two called" not in reply
        assert len(platform.questions) == 1
        _, answers = host.store.call(rule_store.load)
        assert answers[0].tool_origin.server == "s" and answers[0].spec.tool == "mcp__s__wipe"


async def test_an_approval_follows_its_tool_when_the_host_names_it_otherwise(
    home, fake_llm, store_target, monkeypatch
):
    async with running(home, fake_llm, store_target, {"s": server("one", "wipe")}) as host:
        await approve(host, fake_llm, "mcp__s__wipe")
        monkeypatch.setattr(mcp_tools, "PREFIX", "tool__")  # the naming scheme changes
        assert "tool__s__wipe" in names(host)
        platform = AskingPlatform(False)
        reply = await turn(host, fake_llm, platform, call("tool__s__wipe"))
        assert reply == "one called wipe" and platform.questions == []


async def test_a_rule_written_by_the_name_the_model_sees_still_allows_its_tool(
    home, fake_llm, store_target
):
    servers = {"s": server("one", "wipe", "a.b"), "g": server("two", "wipe")}
    async with running(home, fake_llm, store_target, servers) as host:
        (dotted,) = [n for n in names(host) if n.startswith("mcp__s__a_b")]
        permissions = [
            {"tool": dotted, "action": "allow"},
            {"tool": "mcp__g__*", "action": "allow"},
        ]
    more = {"permissions": permissions}
    async with running(home, fake_llm, store_target, servers, **more) as host:
        platform = AskingPlatform(False)
        assert await turn(host, fake_llm, platform, activate("s"), call(dotted)) == "one called a.b"
        assert await turn(host, fake_llm, platform, activate("g"), call("mcp__g__wipe")) == (
            "two called wipe"
        )
        reply = await turn(host, fake_llm, platform, call("mcp__s__wipe"))  # no rule names it
        assert "said no" in reply
        assert len(platform.questions) == 1


async def test_an_old_remembered_answer_is_migrated_and_never_covers_another_tool(
    home, fake_llm, store_target
):
    """Rows stored before origins were kept: `mcp__s__a_b` may have been `a.b`'s answer
    (before 2026-12-03 `a.b` was so named while the server listed no `a_b`), so it covers
    no tool now; `mcp__s__wipe` can only have been `wipe`'s, so it still covers `wipe`."""
    old = Store(store_target, [m for m in core_migrations() if m.number != 11])
    for tool in ("mcp__s__a_b", "mcp__s__wipe"):
        old.call(
            lambda db, tool=tool: db.execute(
                "INSERT INTO permission_rules (kind, position, tool, args, who, action, note,"
                " created_at) VALUES ('remembered', 1, ?, '{}', ?, 'allow', '', 0)",
                [tool, '{"conversation": "test:c1"}'],
            )
        )
    old.close()
    async with running(home, fake_llm, store_target, {"s": server("one", "a_b", "wipe")}) as host:
        platform = AskingPlatform(False)
        reply = await turn(host, fake_llm, platform, activate("s"), call("mcp__s__a_b"))
        assert "said no" in reply and len(platform.questions) == 1
        assert await turn(host, fake_llm, platform, call("mcp__s__wipe")) == "one called wipe"
        assert len(platform.questions) == 1
        _, answers = host.store.call(rule_store.load)
        kinds = {a.spec.tool: (a.tool_origin.kind, a.tool_origin.tool) for a in answers}
        assert kinds == {"mcp__s__a_b": ("unknown", ""), "mcp__s__wipe": ("mcp", "wipe")}


async def test_a_rule_added_at_run_time_stays_with_its_tool_when_servers_swap_names(
    home, fake_llm, store_target
):
    before = {"s": server("one", "wipe"), "t": server("two", "wipe")}
    async with running(home, fake_llm, store_target, before) as host:
        rule = {"tool": "mcp__s__wipe", "action": "allow"}
        await host.queries.add_permission_rule(rule, "web")  # as the dashboard adds it
        platform = AskingPlatform(False)
        reply = await turn(host, fake_llm, platform, activate("s"), call("mcp__s__wipe"))
        assert reply == "one called wipe" and platform.questions == []
        listed = (await host.queries.permission_rules())["rules"][0]
        assert listed["tool"] == "mcp__s__wipe"
        assert listed["tool_origin"]["label"] == "server s, tool 'wipe'"
    after = {"s": server("two", "wipe"), "t": server("one", "wipe")}
    async with running(home, fake_llm, store_target, after) as host:
        platform = AskingPlatform(False)
        reply = await turn(host, fake_llm, platform, activate("s"), call("mcp__s__wipe"))
        assert "said no" in reply and "two called" not in reply
        assert len(platform.questions) == 1


async def test_a_config_allow_for_a_hashed_name_never_reaches_a_tool_named_like_it(
    home, fake_llm, store_target
):
    """A config rule has no origin: it names `a.b` by the name the host made for it,
    `mcp__s__a_b_<hash>`. A tool whose own name is that text (`a_b_<hash>`) must not be
    given the same name when `a.b` is gone, or it would take the rule's allow."""
    servers = {"s": server("one", "a.b")}
    async with running(home, fake_llm, store_target, servers) as host:
        (dotted,) = [n for n in names(host) if n.startswith("mcp__s__a_b")]
    more = {"permissions": [{"tool": dotted, "action": "allow"}]}
    async with running(home, fake_llm, store_target, servers, **more) as host:
        platform = AskingPlatform(False)
        assert await turn(host, fake_llm, platform, activate("s"), call(dotted)) == "one called a.b"
        forged = dotted.removeprefix("mcp__s__")
        await host.mcp.call_tool("s", "change", {"remove": ["a.b"], "add": [forged]})
        await until(lambda: forged in originals(host))
        (alike,) = [t.name for t in host.registry.group_tools("s") if t.origin.tool == forged]
        reply = await turn(host, fake_llm, platform, call(alike))
        assert "said no" in reply and "called" not in reply
        assert len(platform.questions) == 1
        assert alike != dotted and alike.startswith(f"{dotted}_")  # named apart, hashed


async def test_the_approvals_record_names_each_decisions_tool_by_its_origin(
    home, fake_llm, store_target
):
    """The record (`approvals`) is for people auditing what ran: a name can later be another
    tool's, so each row keeps the origin of the tool decided about, as the answers do."""
    async with running(home, fake_llm, store_target, {"s": server("one", "a.b")}) as host:
        (dotted,) = [n for n in names(host) if not n.endswith("__change")]
        platform = await approve(host, fake_llm, dotted)
        assert await turn(host, fake_llm, platform, call(dotted)) == "one called a.b"
        source = host.mcp.source("s")
        rows = host.store.call(
            lambda db: [
                (r["tool"], r["decided_by"], parse(r["tool_origin"]))
                for r in db.query("SELECT * FROM approvals ORDER BY id")
            ]
        )
        _, (answer,) = host.store.call(rule_store.load)
        origin = Origin(MCP, "a.b", "s", source)
        assert answer.tool_origin == origin
        assert rows == [
            (dotted, "u1", origin),
            (dotted, f"remembered #{answer.id}", origin),
        ]


async def test_rules_add_takes_an_origin_from_the_running_hosts_listing_without_starting_it(
    home, fake_llm, store_target, tmp_path
):
    starts = tmp_path / "starts"
    s = {**server("one", "a.b"), "env": {"SHIFTING_STARTS": str(starts)}}
    config = {"llm": fake_llm.openai_config(), "store": {"url": str(store_target)}}
    (home / "bothost.yaml").write_text(json.dumps({**config, "mcp": {"servers": {"s": s}}}))
    runner = CliRunner()

    def add(name: str) -> Any:
        return runner.invoke(cli, ["--home", str(home), "rules", "add", name, "allow"])

    # a long-running host (it serves HTTP) publishes its servers' listings
    host = make_host(home, {**config, "mcp": {"servers": {"s": s}}, **QUIET_WEB})
    await host.start(serve_http=True, tick=False)
    try:
        await host.registry.settle({"s"})
        (dotted,) = [n for n in names(host) if not n.endswith("__change")]
        assert len(starts.read_text().splitlines()) == 1  # the host's own process
        result = await asyncio.to_thread(add, dotted)
        assert result.exit_code == 0, result.output
        assert result.stdout.strip() == "Added rule #1 (server s, tool 'a.b')."
        assert result.stderr == ""
        assert len(starts.read_text().splitlines()) == 1  # no second process was started
        (stored,), _ = host.store.call(rule_store.load)
        assert stored.tool_origin == Origin(MCP, "a.b", "s", host.mcp.source("s"))
    finally:
        await host.stop()
    # no host runs: the server is started to ask, and the command says so in one line
    result = await asyncio.to_thread(add, dotted)
    assert result.exit_code == 0, result.output
    assert (
        result.stderr == f"Starting MCP server s to look up {dotted} (no running host lists it).\n"
    )
    assert result.stdout.strip() == "Added rule #2 (server s, tool 'a.b')."
    assert len(starts.read_text().splitlines()) == 2


async def test_a_server_named_like_anothers_made_name_never_takes_its_rules(
    home, fake_llm, store_target
):
    """`a__b` is written `a_b-<hash>` in tool names; a server configured under that very
    name must not give its tools the names a config rule for `a__b`'s tools names."""
    alike = mcp_tools.server_part("a__b")
    servers = {"a__b": server("one", "wipe"), alike: server("two", "wipe")}
    more = {"permissions": [{"tool": f"mcp__{alike}__wipe", "action": "allow"}]}
    async with running(home, fake_llm, store_target, servers, **more) as host:
        platform = AskingPlatform(False)
        (other,) = names(host, alike)[1:]  # [0] is `change`
        reply = await turn(host, fake_llm, platform, activate(alike), call(other))
        assert "said no" in reply and "two called" not in reply
        assert other != f"mcp__{alike}__wipe"
        reply = await turn(host, fake_llm, platform, activate("a__b"), call(f"mcp__{alike}__wipe"))
        assert reply == "one called wipe"
        assert len(platform.questions) == 1


async def test_rules_test_reads_a_tool_from_the_running_hosts_listing_without_starting_it(
    home, fake_llm, store_target, tmp_path
):
    starts = tmp_path / "starts"
    s = {**server("one", "a.b"), "env": {"SHIFTING_STARTS": str(starts)}}
    config = {"llm": fake_llm.openai_config(), "store": {"url": str(store_target)}}
    (home / "bothost.yaml").write_text(json.dumps({**config, "mcp": {"servers": {"s": s}}}))
    runner = CliRunner()

    def test(name: str) -> Any:
        return runner.invoke(cli, ["--home", str(home), "rules", "test", name, "--json"])

    host = make_host(home, {**config, "mcp": {"servers": {"s": s}}, **QUIET_WEB})
    await host.start(serve_http=True, tick=False)
    try:
        await host.registry.settle({"s"})
        (dotted,) = [n for n in names(host) if not n.endswith("__change")]
        assert len(starts.read_text().splitlines()) == 1  # the host's own process
        result = await asyncio.to_thread(test, dotted)
        assert result.exit_code == 0, result.output
        assert result.stderr == ""
        assert len(starts.read_text().splitlines()) == 1  # no second process was started
        listed = json.loads(result.stdout)
        # the tool is known, with its capabilities (destructive: asked by default)
        assert listed["action"] == "ask" and listed["notes"] == [], listed
    finally:
        await host.stop()
    # no host runs: the server is started to ask, and the command says so in one line
    result = await asyncio.to_thread(test, dotted)
    assert result.exit_code == 0, result.output
    assert (
        result.stderr == f"Starting MCP server s to look up {dotted} (no running host lists it).\n"
    )
    assert json.loads(result.stdout) == listed
    assert len(starts.read_text().splitlines()) == 2
