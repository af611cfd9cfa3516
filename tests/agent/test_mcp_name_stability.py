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
