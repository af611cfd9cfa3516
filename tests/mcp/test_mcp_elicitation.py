"""Whose question is it: a server's elicitation reaches the person whose call it belongs to.

Over Streamable HTTP the server asks on the stream of the call that caused the question, so
the answer is exact whatever else is in flight. Over stdio nothing on the wire names the
call: the question goes to the one conversation that has calls in flight, and when calls of
several conversations are in flight it goes to nobody (``cancel``) rather than to the wrong
person.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from mcp_helpers import PAGING_SERVER, free_port, listening, wait_for

from bothost.agent.mcp_tools import McpToolSource
from bothost.agent.tools import ToolContext
from bothost.config import McpServerConfig
from bothost.mcp.manager import McpManager
from bothost.models import Address, Session
from bothost.store import Store, core_migrations

WAIT = 15.0  # start() waits this long for the server to be ready
ECHO_SERVER = Path(__file__).resolve().parents[1] / "mcp_servers" / "echo_server.py"
OTHER_SESSIONS = 1_001  # more conversations than any cache of askers would keep


class AskingPlatform:
    """A platform whose person answers every question with their own name."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.questions: list[tuple[Address, str]] = []

    async def ask(self, address, question):
        self.questions.append((address, question.text))
        return {"name": self.name, "answer": self.name}


def conversation(name: str) -> tuple[ToolContext, AskingPlatform]:
    platform = AskingPlatform(name)
    session = Session(id=f"web:{name}", address=Address("web", name), user=name, platform=platform)
    return ToolContext(session=session, host=None), platform


@pytest.fixture
async def source(home):
    store = Store(home / "bothost.db", core_migrations())
    managers: list[McpManager] = []

    async def make(config: McpServerConfig, name: str) -> tuple[McpToolSource, dict]:
        manager = McpManager({name: config}, store, home)
        managers.append(manager)
        await manager.start(wait=WAIT)
        assert manager.status()[0].state == "ready"
        tool_source = McpToolSource(manager, SimpleNamespace(mcp=SimpleNamespace(servers={})))
        return tool_source, {t.name: t for t in tool_source.tools(name)}

    yield make
    for manager in managers:
        await manager.stop()
    store.close()


@pytest.fixture
async def echo_http(tmp_path):
    port = free_port()
    log = open(tmp_path / "echo.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, str(ECHO_SERVER), "--http", f"127.0.0.1:{port}"],
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    try:
        await wait_for(lambda: listening(port), timeout=15)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
        log.close()


async def test_a_question_reaches_the_asker_of_its_call_with_many_calls_in_flight(source):
    tool_source, tools = await source(
        McpServerConfig(command=sys.executable, args=[str(PAGING_SERVER)]), "paging"
    )
    ana, ana_platform = conversation("ana")
    # Ana has calls in flight while many other conversations come and go…
    slow = [
        asyncio.ensure_future(tools["mcp__paging__slow"].run({"seconds": 30}, ana))
        for _ in range(3)
    ]
    others = [conversation(f"user{i}")[0] for i in range(OTHER_SESSIONS)]
    for batch in range(0, OTHER_SESSIONS, 100):
        await asyncio.gather(
            *(
                tools["mcp__paging__echo"].run({"text": "x"}, ctx)
                for ctx in others[batch : batch + 100]
            )
        )
    # …then one of her calls asks her something: the question is hers, not nobody's
    try:
        result = await tools["mcp__paging__elicit"].run({}, ana)
    finally:
        for task in slow:
            task.cancel()
        await asyncio.gather(*slow, return_exceptions=True)
    assert json.loads(result.content)["action"] == "accept"
    assert json.loads(result.content)["content"]["name"] == "ana"
    assert [address for address, _ in ana_platform.questions] == [Address("web", "ana")]


async def test_two_conversations_asked_at_once_over_http_each_get_their_own_question(
    source, echo_http
):
    tool_source, tools = await source(McpServerConfig(url=echo_http), "echo")
    ana, ana_platform = conversation("ana")
    bo, bo_platform = conversation("bo")
    ask = tools["mcp__echo__ask"]
    answers = await asyncio.gather(
        ask.run({"question": "for ana?"}, ana), ask.run({"question": "for bo?"}, bo)
    )
    assert [a.content for a in answers] == ["answer: ana", "answer: bo"]
    assert [text for _, text in ana_platform.questions] == ["echo asks: for ana?"]
    assert [text for _, text in bo_platform.questions] == ["echo asks: for bo?"]


async def test_over_stdio_a_question_with_two_conversations_in_flight_goes_to_nobody(source):
    tool_source, tools = await source(
        McpServerConfig(command=sys.executable, args=[str(PAGING_SERVER)]), "paging"
    )
    ana, ana_platform = conversation("ana")
    bo, bo_platform = conversation("bo")
    slow = asyncio.ensure_future(tools["mcp__paging__slow"].run({"seconds": 30}, bo))
    try:
        result = await tools["mcp__paging__elicit"].run({}, ana)
    finally:
        slow.cancel()
        await asyncio.gather(slow, return_exceptions=True)
    # nothing on a stdio wire says whose call asked: nobody is asked, least of all Bo
    assert json.loads(result.content) == {"action": "cancel"}
    assert ana_platform.questions == [] and bo_platform.questions == []


FORM = {
    "type": "object",
    "properties": {
        "age": {"type": "integer", "minimum": 0},
        "height": {"type": "number"},
        "subscribe": {"type": "boolean"},
        "color": {"type": "string", "enum": ["red", "green"]},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l"}]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "note": {"type": "string", "default": "none"},
    },
    "required": ["age", "color"],
}


class FormPlatform:
    """A person who fills the form in as typed text, one answer per question asked."""

    def __init__(self, answers: list) -> None:
        self.answers = answers
        self.questions: list[str] = []

    async def ask(self, address, question):
        self.questions.append(question.text)
        return self.answers[len(self.questions) - 1]


async def elicit_form(source, answers: list) -> tuple[dict, FormPlatform]:
    _, tools = await source(
        McpServerConfig(command=sys.executable, args=[str(PAGING_SERVER)]), "paging"
    )
    platform = FormPlatform(answers)
    session = Session(id="web:ana", address=Address("web", "ana"), user="ana", platform=platform)
    context = ToolContext(session=session, host=None)
    result = await tools["mcp__paging__elicit"].run({"schema": FORM}, context)
    return json.loads(result.content), platform


async def test_a_form_answer_typed_as_text_reaches_the_server_as_the_schema_types(source):
    typed = {"age": "42", "height": "1.8", "subscribe": "yes", "color": "red", "size": "s"}
    got, platform = await elicit_form(source, [{**typed, "tags": ["a", "b"]}])
    assert got == {
        "action": "accept",
        "content": {
            "age": 42,
            "height": 1.8,
            "subscribe": True,
            "color": "red",
            "size": "s",
            "tags": ["a", "b"],
            "note": "none",
        },
    }
    assert len(platform.questions) == 1


async def test_a_form_answer_that_does_not_fit_is_asked_again_naming_the_fields(source):
    wrong = {"age": "forty", "subscribe": "perhaps", "color": "blue", "tags": ["c"]}
    got, platform = await elicit_form(
        source, [wrong, {"age": "-1", "color": "red"}, {"age": 7, "color": "green"}]
    )
    assert got == {"action": "accept", "content": {"age": 7, "color": "green", "note": "none"}}
    assert platform.questions[1] == (
        "paging asks: Your name?\n(Not accepted: age: expected a whole number; subscribe: "
        "expected yes or no; color: expected one of 'red', 'green'; tags: expected choices of "
        "'a', 'b'. Answer again.)"
    )
    assert platform.questions[2].endswith("(Not accepted: age: at least 0. Answer again.)")


async def test_a_form_never_filled_in_right_is_cancelled_not_sent(source):
    got, platform = await elicit_form(source, [{"color": "red"}] * 3)
    assert got == {"action": "cancel"}
    assert len(platform.questions) == 3 and "age: required" in platform.questions[2]
