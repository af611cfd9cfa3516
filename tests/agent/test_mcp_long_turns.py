"""Long MCP calls inside agent turns: the MCP layer owns their deadline, `stop` still stops.

``agent.tool_timeout`` and the server's ``timeout`` are both fractions of a second here; a
call that reports progress, or waits for the person to answer the server's question, must
outlive both, and ``stop`` must end it at once.
"""

import asyncio
import sys
from pathlib import Path

import pytest

from bothost.api import Outcome
from bothost.models import Address, IncomingMessage
from tests.fakes.llm import last_tool_result
from tests.helpers import make_host, until

LONG_SERVER = str(Path(__file__).resolve().parents[1] / "mcp" / "servers" / "long_call_server.py")
SHORT = "300ms"  # both the agent's tool timeout and the servers' timeout


def message(text):
    return IncomingMessage(address=Address("test", "c1"), text=text, user="u1")


def call(tool, **arguments):
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def echo(body):
    return {"text": last_tool_result(body)}


def server(**keys):
    return {"command": sys.executable, "args": [LONG_SERVER], "timeout": SHORT, **keys}


@pytest.fixture
async def long_host(home, fake_llm):
    host = make_host(
        home,
        {
            "llm": fake_llm.openai_config(),
            "agent": {"tool_timeout": SHORT},
            "mcp": {"servers": {"long": server(max_timeout="30s"), "clock": server()}},
        },
    )
    await host.start(serve_http=False, tick=False)
    yield host
    await host.stop()


class SlowPerson:
    """Answers the server's question only after a call to `clock`, started when the
    question came, has timed out: later than any timeout in play."""

    name = "test"

    def __init__(self, host):
        self.host = host
        self.late: list = []

    async def ask(self, address, question):
        self.late.append(await self.host.mcp.call_tool("clock", "quiet", {"seconds": 30}))
        return {"password": "hunter2"}


async def test_progress_keeps_an_mcp_call_going_past_the_agents_tool_timeout(long_host, fake_llm):
    fake_llm.script = [
        call("activate_tools", groups=["long"]),
        call("mcp__long__ticking", count=30, interval=0.05),
        echo,
    ]
    assert (await long_host.handle_message(message("build it"))).text == "ticked 30"


async def test_a_question_answered_late_does_not_fail_the_call(long_host, fake_llm):
    person = SlowPerson(long_host)
    fake_llm.script = [call("activate_tools", groups=["long"]), call("mcp__long__ask"), echo]
    reply = await long_host.handle_message(message("sudo it"), platform=person)
    assert "timed out" in person.late[0].text
    assert '"action": "accept"' in reply.text and "hunter2" in reply.text


async def test_stop_ends_a_long_mcp_call_at_once(long_host, fake_llm):
    shown: list[str] = []

    async def on_status(text):
        shown.append(text)

    fake_llm.script = [call("activate_tools", groups=["long"]), call("mcp__long__ticking")]
    turn = asyncio.ensure_future(long_host.handle_message(message("go"), on_status=on_status))
    await until(lambda: any("tick" in s for s in shown))
    assert long_host.cancel(Address("test", "c1")) == [Address("test", "c1")]
    async with asyncio.timeout(5):  # max_timeout is 30 s: only `stop` ends it this soon
        assert (await turn).outcome is Outcome.STOPPED
