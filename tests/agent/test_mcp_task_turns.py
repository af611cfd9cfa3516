"""MCP Tasks inside agent turns: a tool that requires a task works like any tool, its
status is the turn's status, and ``stop`` cancels the task on the server; a question the
server asks as a task of the client's still reaches the person of the turn."""

import asyncio
import json
import sys
from pathlib import Path

import pytest

from bothost.api import Outcome
from bothost.models import Address, IncomingMessage
from bothost.platform import ALLOW_ALWAYS
from tests.agent.conftest import AskingPlatform
from tests.fakes.llm import last_tool_result
from tests.helpers import make_host, until
from tests.peers import server_everything

TASK_SERVER = str(Path(__file__).resolve().parents[1] / "mcp" / "servers" / "task_server.py")
REQUESTOR = str(Path(__file__).resolve().parents[1] / "mcp" / "servers" / "requestor_server.py")


def message(text):
    return IncomingMessage(address=Address("test", "c1"), text=text, user="u1")


def call(tool, **arguments):
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def echo(body):
    return {"text": last_tool_result(body)}


@pytest.fixture
async def host_with(home, fake_llm):
    hosts = []

    async def make(**servers):
        llm = fake_llm.openai_config()
        host = make_host(home, {"llm": llm, "mcp": {"servers": servers}})
        hosts.append(host)
        await host.start(serve_http=False, tick=False)
        return host

    yield make
    for host in hosts:
        await host.stop()


async def test_a_task_tool_of_server_everything_answers_the_model(host_with, fake_llm):
    host = await host_with(everything={"command": server_everything()[0]})
    # server-everything adds its task tool just after initialize, announcing it
    await until(
        lambda: any(t["name"] == "simulate-research-query" for t in host.mcp.tools("everything"))
    )
    shown: list[str] = []

    async def on_status(text):
        shown.append(text)

    fake_llm.script = [
        call("activate_tools", groups=["everything"]),
        call("mcp__everything__simulate-research-query", topic="tides"),
        echo,
    ]
    reply = await host.handle_message(message("research tides"), on_status=on_status)
    assert reply.text.startswith("# Research Report: tides"), reply.text
    assert last_tool_result(fake_llm.requests[-1]).startswith("# Research Report: tides")
    assert "everything/simulate-research-query: Gathering sources..." in shown


async def test_stop_cancels_the_task_on_the_server(host_with, fake_llm):
    host = await host_with(t={"command": sys.executable, "args": [TASK_SERVER]})
    shown: list[str] = []

    async def on_status(text):
        shown.append(text)

    fake_llm.script = [call("activate_tools", groups=["t"]), call("mcp__t__stuck", chatty=True)]
    turn = asyncio.ensure_future(host.handle_message(message("go"), on_status=on_status))
    await until(lambda: any("still going" in s for s in shown))
    assert host.cancel(Address("test", "c1")) == [Address("test", "c1")]
    async with asyncio.timeout(5):
        assert (await turn).outcome is Outcome.STOPPED

    async def cancelled():
        return json.loads((await host.mcp.call_tool("t", "seen")).text)["cancelled"]

    async with asyncio.timeout(5):
        while not await cancelled():
            await asyncio.sleep(0.02)


async def test_a_question_asked_as_a_task_of_the_client_reaches_the_person(host_with, fake_llm):
    host = await host_with(r={"command": sys.executable, "args": [REQUESTOR]})
    platform = AskingPlatform({"colour": "teal"})
    fake_llm.script = [
        call("activate_tools", groups=["r"]),
        call("mcp__r__ask_as_task", message="Favourite colour?"),
        echo,
    ]
    reply = await host.handle_message(message("ask me"), platform=platform)
    # the server got a CreateTaskResult, polled tasks/get, fetched tasks/result
    said = json.loads(reply.text)
    assert said["statuses"] == ["working", "completed"], said
    assert said["result"]["action"] == "accept"
    assert said["result"]["content"] == {"colour": "teal"}
    assert said["related"] and said["listed"]
    assert [q.kind for q in platform.questions] == ["form"]
    assert "Favourite colour?" in platform.questions[0].text


async def test_a_sampling_asked_as_a_task_is_approved_and_answered_by_the_model(
    host_with, fake_llm
):
    host = await host_with(r={"command": sys.executable, "args": [REQUESTOR], "sampling": True})
    platform = AskingPlatform(ALLOW_ALWAYS)
    fake_llm.script = [
        call("activate_tools", groups=["r"]),
        call("mcp__r__sample_as_task", text="A long story about a cat."),
        {"text": "A cat's tale."},  # the sampling request, run as the client's task
        echo,
    ]
    reply = await host.handle_message(message("summarize"), platform=platform)
    said = json.loads(reply.text)
    assert said["statuses"] == ["working", "completed"], said
    assert said["result"]["content"] == {"type": "text", "text": "A cat's tale."}
    assert said["related"]
    assert "MCP server r asks the model" in platform.questions[0].text  # approval, as usual
