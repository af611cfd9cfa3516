"""The kit, driven through the official Python SDK client over stdio (the echo server)."""

from __future__ import annotations

import asyncio
import json
import os

from mcp import types

CAPS = "bothost/capabilities"


async def test_lists_tools_with_schemas_and_capabilities(mcp_stdio, echo_argv):
    async with mcp_stdio(echo_argv) as (client, _):
        assert client.session.initialize_result.server_info.name == "echo"
        result = await client.list_tools()
        tools = {tool.name: tool for tool in result.tools}
        assert set(tools) == {"echo", "add", "fail", "ask", "slow", "announce", "stray_output"}
        echo = tools["echo"]
        assert echo.description == "Repeat a text."
        assert echo.input_schema["required"] == ["text"]
        assert echo.input_schema["properties"]["times"] == {
            "type": "integer",
            "description": "How many times.",
            "default": 1,
        }
        assert echo.annotations.read_only_hint is True
        assert echo.meta[CAPS] == {
            "private": False,
            "untrusted": False,
            "egress": "none",
            "destructive": False,
        }
        assert tools["add"].output_schema["required"] == ["sum"]
        assert "ctx" not in tools["ask"].input_schema["properties"]
        assert tools["fail"].input_schema["properties"]["kind"]["enum"] == ["tool", "bug"]


async def test_call_returns_text(mcp_stdio, echo_argv):
    async with mcp_stdio(echo_argv) as (client, _):
        result = await client.call_tool("echo", {"text": "hi", "times": 2, "shout": True})
        assert not result.is_error
        assert result.content[0].text == "HI HI"


async def test_structured_result_has_text_mirror(mcp_stdio, echo_argv):
    async with mcp_stdio(echo_argv) as (client, _):
        result = await client.call_tool("add", {"a": 1, "b": 2.5, "more": [3]})
        assert result.structured_content == {"sum": 6.5, "terms": [1, 2.5, 3]}
        assert json.loads(result.content[0].text) == result.structured_content


async def test_tool_error_and_bug_are_error_results(mcp_stdio, echo_argv, stderr_log):
    async with mcp_stdio(echo_argv) as (client, _):
        expected = await client.call_tool("fail", {"message": "Unknown place 'Atlantis'"})
        assert expected.is_error
        assert expected.content[0].text == "Unknown place 'Atlantis'"
        bug = await client.call_tool("fail", {"message": "kaboom", "kind": "bug"})
        assert bug.is_error
        assert "RuntimeError: kaboom" in bug.content[0].text
        wrong = await client.call_tool("echo", {"text": 5})
        assert wrong.is_error and "expected string" in wrong.content[0].text
        # The server survives all three.
        assert (await client.call_tool("echo", {"text": "ok"})).content[0].text == "ok"
    assert "Traceback" in stderr_log.read_text()


async def test_elicitation_answered_and_declined(mcp_stdio, echo_argv):
    answers = iter(
        [
            types.ElicitResult(action="accept", content={"answer": "blue"}),
            types.ElicitResult(action="decline"),
        ]
    )
    questions = []

    async def on_elicit(context, params):
        questions.append((params.message, params.requested_schema["required"]))
        return next(answers)

    async with mcp_stdio(echo_argv, elicitation_callback=on_elicit) as (client, _):
        first = await client.call_tool("ask", {"question": "Favourite colour?"})
        assert first.content[0].text == "answer: blue"
        second = await client.call_tool("ask", {"question": "And now?"})
        assert second.content[0].text == "no answer"
    assert questions == [("Favourite colour?", ["answer"]), ("And now?", ["answer"])]


async def test_elicitation_without_client_capability_returns_none(mcp_stdio, echo_argv):
    async with mcp_stdio(echo_argv) as (client, _):
        result = await client.call_tool("ask", {"question": "Anyone there?"})
        assert result.content[0].text == "no answer"


async def test_pushed_event_notifications_reach_the_client(mcp_stdio, echo_argv, home):
    async with mcp_stdio(
        echo_argv, env={"ECHO_WATCH": "1"}, events=["event/echo", "event/echo_tick"]
    ) as (client, events):
        (tick,) = await events.wait_for("event/echo_tick")
        assert tick["id"] == "tick-1" and tick["severity"] == "info"
        result = await client.call_tool("announce", {"summary": "hello"})
        assert result.content[0].text == "sent to 1"
        (event,) = await events.wait_for("event/echo")
        assert event["summary"] == "hello" and event["occurred_at"].endswith("Z")
    assert (home / "state" / "echo" / "ticks").read_text() == "1"


async def test_progress_and_a_quick_call_during_a_slow_one(mcp_stdio, echo_argv):
    progress = []

    async def on_progress(value, total, message):
        progress.append((value, total, message))

    async with mcp_stdio(echo_argv) as (client, _):
        call = asyncio.create_task(
            client.call_tool("slow", {"seconds": 3.0}, progress_callback=on_progress)
        )
        async with asyncio.timeout(2.5):  # answered while the slow call still runs
            quick = await client.call_tool("echo", {"text": "meanwhile"})
        assert quick.content[0].text == "meanwhile"
        assert not call.done()
        result = await call
        assert result.content[0].text == "slept 3.0"
    assert progress[0] == (0, 10, "step 0") and len(progress) == 10


async def test_an_sdk_client_that_did_not_ask_for_events_gets_none(mcp_stdio, echo_argv):
    async with mcp_stdio(echo_argv, events=["event/echo"], wants_events=False) as (client, events):
        result = await client.call_tool("announce", {"summary": "hello"})
        assert result.content[0].text == "sent to 0"
        await client.call_tool("echo", {"text": "after"})  # the event would have come first
        assert events.of("event/echo") == []


async def test_bothost_declares_events_and_receives_them(echo_argv, home):
    from bothost.mcp.serverlog import close_server_logger, server_logger
    from bothost.mcp.session import ClientSession
    from bothost.mcp.stdio import StdioTransport
    from tests.helpers import until
    from tests.mcp.mcp_helpers import Recorder

    recorder, log = Recorder(), server_logger(home, "echo")
    env = {"PATH": os.environ["PATH"], "BOTHOST_HOME": str(home)}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    transport = StdioTransport(echo_argv[0], echo_argv[1:], env, log=log)
    session = ClientSession(transport, name="echo", log=log, on_events=recorder.on_events)
    try:
        await session.start()
        result = await session.call_tool("announce", {"summary": "hello"})
        assert result.text == "sent to 1"
        await until(lambda: recorder.events)
        assert recorder.events[0][:2] == ("echo", "event/echo")
    finally:
        await session.close()
        close_server_logger("echo")
