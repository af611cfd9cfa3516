"""Sampling in a turn: an SDK 2.x server's tool asks the host's model, with a person's yes.

The fake OpenAI server answers the turn and the sampling request alike, in script order;
the server (tests/agent/sampling_server.py) returns what its sampling call got back.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bothost.models import Address, IncomingMessage
from bothost.platform import ALLOW_ALWAYS
from tests.agent.conftest import AskingPlatform
from tests.fakes.llm import last_tool_result
from tests.helpers import make_host

SERVER = str(Path(__file__).with_name("sampling_server.py"))
UNTRUSTED = '<untrusted-content source="MCP server sampler">'


def message(text: str, admin: bool = True) -> IncomingMessage:
    return IncomingMessage(address=Address("test", "c1"), text=text, user="u1", is_admin=admin)


def call(tool: str, **arguments) -> dict:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def echo(body: dict) -> dict:
    return {"text": last_tool_result(body)}


def host_with(home, fake_llm, sampling: bool, budgets: dict | None = None):
    server = {"command": sys.executable, "args": [SERVER], "sampling": sampling}
    return make_host(
        home,
        {
            "llm": fake_llm.openai_config("fake-model"),
            "agent": {"approval": "ask"},
            "mcp": {"servers": {"sampler": server}},
            **({"usage": {"budgets": budgets}} if budgets else {}),
        },
    )


@pytest.fixture
async def sampling_host(home, fake_llm):
    host = host_with(home, fake_llm, sampling=True)
    await host.start(serve_http=False, tick=False)
    yield host
    await host.stop()


def usage_rows(host) -> list[dict]:
    return host.store.call(
        lambda db: [dict(r) for r in db.query("SELECT * FROM llm_usage ORDER BY id")]
    )


async def test_sampling_asks_once_then_remembers_always(sampling_host, fake_llm):
    platform = AskingPlatform(ALLOW_ALWAYS)
    fake_llm.script = [
        call("activate_tools", groups=["sampler"]),
        call("mcp__sampler__summarize", text="A long story about a cat."),
        {"text": "A cat's tale."},  # the sampling request
        echo,
    ]
    reply = (await sampling_host.handle_message(message("summarize"), platform=platform)).text
    answer = json.loads(reply)
    assert answer == {
        "model": "fake-model",
        "stop": "endTurn",
        "content": [{"type": "text", "text": "A cat's tale."}],
    }
    assert len(platform.questions) == 1
    question = platform.questions[0]
    assert "MCP server sampler asks the model" in question.text
    assert "A long story about a cat." in question.text
    assert [c.value for c in question.choices] == ["conversation", "always"]

    sampled = fake_llm.requests[2]
    system, user = sampled["messages"][0]["content"], sampled["messages"][1]["content"]
    assert "MCP sampling" in system
    assert UNTRUSTED in system and "You summarize in one line." in system  # its own prompt
    assert user.startswith(UNTRUSTED) and "A long story about a cat." in user
    assert len(sampled["messages"]) == 2  # includeContext "allServers" read as none
    assert "tools" not in sampled or not sampled["tools"]
    assert sampled["max_tokens"] == 4096  # the server asked for 50,000

    rows = usage_rows(sampling_host)
    assert [r["mcp_server"] for r in rows] == [None, None, "sampler", None]
    turn = rows[0]
    assert (rows[2]["user_key"], rows[2]["turn_id"]) == (turn["user_key"], turn["turn_id"])
    assert rows[2]["user_key"] == "test:u1"

    fake_llm.script = [
        call("mcp__sampler__summarize", text="Another story."),
        {"text": "Short."},
        echo,
    ]
    reply = (await sampling_host.handle_message(message("again"), platform=platform)).text
    assert json.loads(reply)["content"][0]["text"] == "Short."
    assert len(platform.questions) == 1  # remembered: not asked again
    decisions = sampling_host.store.call(
        lambda db: [
            (r["tool"], r["decision"], r["reason"][:10])
            for r in db.query("SELECT * FROM approvals ORDER BY id")
        ]
    )
    assert decisions[0][:2] == ("sampling:sampler", "allow")
    assert decisions[1][:2] == ("sampling:sampler", "allow")


async def test_a_no_is_an_error_the_server_reads(sampling_host, fake_llm):
    platform = AskingPlatform(False)
    fake_llm.script = [
        call("activate_tools", groups=["sampler"]),
        call("mcp__sampler__summarize", text="secret plans"),
        echo,
    ]
    reply = (await sampling_host.handle_message(message("summarize"), platform=platform)).text
    assert "sampling request refused: the user said no" in reply
    assert len(fake_llm.requests) == 3  # the model was never asked for the server
    assert all(r["mcp_server"] is None for r in usage_rows(sampling_host))


async def test_tools_in_sampling_round_trip(sampling_host, fake_llm):
    platform = AskingPlatform(True)
    fake_llm.script = [
        call("activate_tools", groups=["sampler"]),
        call("mcp__sampler__lookup", word="cat"),
        call("define", word="cat"),  # the first sampling request: the model uses the tool
        {"text": "A cat is a small word."},  # the second, with the tool's result
        echo,
    ]
    reply = (await sampling_host.handle_message(message("define"), platform=platform)).text
    answer = json.loads(reply)
    assert answer["stop"] == "endTurn"
    assert answer["content"] == [{"type": "text", "text": "A cat is a small word."}]
    first, second = fake_llm.requests[2], fake_llm.requests[3]
    assert [t["function"]["name"] for t in first["tools"]] == ["define"]
    assert first["tools"][0]["function"]["description"].startswith(UNTRUSTED)
    result = second["messages"][-1]
    assert result["role"] == "tool" and "cat: a small word" in result["content"]
    assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "define"
    assert len(platform.questions) == 2  # plain yes: each request asked


async def test_spent_budget_is_an_error_result(home, fake_llm):
    host = host_with(home, fake_llm, sampling=True, budgets={"user_daily": {"tokens": 30}})
    await host.start(serve_http=False, tick=False)
    try:
        platform = AskingPlatform(True)
        fake_llm.script = [
            call("activate_tools", groups=["sampler"]),
            call("mcp__sampler__summarize", text="x"),
            echo,
        ]
        reply = (await host.handle_message(message("go"), platform=platform)).text
        results = host.store.call(
            lambda db: [
                r["result"] for r in db.query("SELECT * FROM tool_calls WHERE tool LIKE 'mcp%'")
            ]
        )
    finally:
        await host.stop()
    # two turn calls (18 tokens each) spent the person's 30: the sampling call is refused,
    # and so is the turn's next
    assert len(fake_llm.requests) == 2
    assert "Your daily model budget is spent" in results[0]
    assert "daily model budget is spent" in reply


async def test_sampling_off_declares_nothing_and_refuses(home, fake_llm):
    host = host_with(home, fake_llm, sampling=False)
    await host.start(serve_http=False, tick=False)
    try:
        platform = AskingPlatform(True)
        fake_llm.script = [
            call("activate_tools", groups=["sampler"]),
            call("mcp__sampler__summarize", text="x"),
            echo,
        ]
        reply = (await host.handle_message(message("go"), platform=platform)).text
        session = host.mcp_manager().runners["sampler"].session
        declared = session.client_capabilities(session.protocol_version)
    finally:
        await host.stop()
    assert "sampling" not in declared
    assert "sampling is off for MCP server sampler" in reply
    assert not platform.questions
