"""A model-facing MCP tool name belongs to one tool: another tool listed later never takes it.

Permission rules and remembered approval answers name tools by their model-facing name, so
a name that moved to a tool a server added later would carry an approval given for one tool
over to another. The server is tests/mcp/servers/renaming_server.py, a real stdio process.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bothost.models import Address, IncomingMessage
from bothost.platform import ALLOW_CONVERSATION
from tests.agent.conftest import AskingPlatform
from tests.fakes.llm import last_tool_result
from tests.helpers import make_host, until

RENAMING = str(Path(__file__).resolve().parents[1] / "mcp" / "servers" / "renaming_server.py")


def call(tool, **arguments):
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def echo(body):
    return {"text": last_tool_result(body)}


async def test_an_approval_remembered_for_a_tool_never_covers_one_the_server_adds(home, fake_llm):
    host = make_host(
        home,
        {
            "llm": fake_llm.openai_config(),
            "mcp": {"servers": {"s": {"command": sys.executable, "args": [RENAMING]}}},
        },
    )
    await host.start(serve_http=False, tick=False)
    try:
        await host.registry.settle({"s"})

        def names() -> list[str]:
            return sorted(t.name for t in host.registry.group_tools("s"))

        (dotted,) = [n for n in names() if not n.endswith("__grow")]  # the tool `a.b`
        platform = AskingPlatform((ALLOW_CONVERSATION, "u1"))

        async def turn(*steps):
            fake_llm.script = [*steps, echo]
            message = IncomingMessage(address=Address("test", "c1"), text="go", user="u1")
            return (await host.handle_message(message, platform=platform)).text

        assert await turn(call("activate_tools", groups=["s"]), call(dotted)) == "called a.b"
        assert len(platform.questions) == 1  # asked, and allowed for this conversation
        platform.answer = False  # from now on a question is refused

        assert (await host.mcp.call_tool("s", "grow")).text == "called grow"
        await until(lambda: len(names()) == 3)  # the re-listing after list_changed
        # `a_b` needs no sanitising, so it is named as it is; the answer given for `a.b`
        # is not its answer, so it is asked about (and refused)
        assert "mcp__s__a_b" in names()
        reply = await turn(call("mcp__s__a_b"))
        assert "said no" in reply and "called a_b" not in reply
        assert len(platform.questions) == 2
        # and `a.b` keeps its name and its remembered answer
        assert dotted in names()
        assert await turn(call(dotted)) == "called a.b"
        assert len(platform.questions) == 2
    finally:
        await host.stop()


async def test_a_name_two_servers_tools_both_have_belongs_to_neither(
    home, fake_llm, monkeypatch, caplog
):
    # Server parts are distinct by construction (a hashed part always ends in `-` and six
    # hex digits, a plain one never does), so two servers' tools can only share a name when
    # two hashed parts meet; that is forced here. The tool that would win a shared name could
    # take the rules written for the other's.
    from bothost.agent import mcp_tools

    monkeypatch.setattr(mcp_tools, "server_part", lambda server: "same-63e5c1")
    servers = {n: {"command": sys.executable, "args": [RENAMING]} for n in ("a", "b")}
    host = make_host(home, {"llm": fake_llm.openai_config(), "mcp": {"servers": servers}})
    await host.start(serve_http=False, tick=False)
    try:
        await host.registry.settle({"a", "b"})
        await until(lambda: all(host.mcp.tools(n) for n in "ab"))
        shared = "mcp__same-63e5c1__grow"
        assert host.registry.lookup(shared) is None
        assert shared not in [t.name for t in host.registry.visible({"a", "b"})]
        assert shared not in [t.name for t in host.registry.visible({"b"})]
        # `a.b` is hashed with its own name only, so both servers' are one name too
        assert host.registry.group_tools("a") == host.registry.group_tools("b") == []
        assert any(
            shared in r.getMessage() and "a, b" in r.getMessage()
            for r in caplog.records
            if r.levelname == "WARNING"
        )
    finally:
        await host.stop()
