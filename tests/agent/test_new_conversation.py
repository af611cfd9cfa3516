"""``/new``: a fresh conversation in the same place; the model reads nothing said before it,
and the store keeps every message (web chat and the terminal)."""

from __future__ import annotations

import asyncio
import os
import sys

import aiohttp
import pytest

from tests.fakes.llm import FakeLlm
from tests.helpers import COMMAND_SECONDS, make_host, write_config


def said(request: dict) -> list[str]:
    """What the people and the model said in a request the fake got (no system prompt)."""
    return [m["content"] for m in request["messages"] if m["role"] in ("user", "assistant")]


@pytest.fixture
async def fake():
    fake = await FakeLlm().start()
    yield fake
    await fake.stop()


@pytest.fixture
async def client():
    async with aiohttp.ClientSession() as session:
        yield session


async def test_new_in_the_web_chat_starts_afresh_and_keeps_the_history(home, fake, client):
    host = make_host(home, {"llm": fake.openai_config()})
    await host.start(mcp=False, tick=False)
    try:
        url = f"http://127.0.0.1:{host.http.port}"
        fake.script = [{"text": "Hello to you."}, {"text": "Fresh answer."}]
        replies = []
        for text in ("hello there", "/new", "what did I say?"):
            body = {"session": "u", "text": text}
            async with client.post(url + "/api/chat", json=body) as response:
                replies.append((await response.json())["reply"])
        assert replies == ["Hello to you.", "Started a new conversation.", "Fresh answer."]
        assert len(fake.requests) == 2  # /new asked no model
        assert said(fake.requests[0]) == ["hello there"]
        assert said(fake.requests[1]) == ["what did I say?"]
        async with client.get(url + "/api/history", params={"session": "u"}) as response:
            shown = [m["text"] for m in (await response.json())["messages"]]
        assert shown == ["what did I say?", "Fresh answer."]  # the page shows this one
        kept = await host.store.run(
            lambda db: [
                r["content"]
                for r in db.query("SELECT content FROM messages WHERE session_id = 'web:u'")
            ]
        )
        assert kept[:2] == ["hello there", "Hello to you."]  # nothing was deleted
    finally:
        await host.stop()


async def test_new_in_the_web_chat_leaves_other_sessions_alone(home, fake, client):
    host = make_host(home, {"llm": fake.openai_config()})
    await host.start(mcp=False, tick=False)
    try:
        url = f"http://127.0.0.1:{host.http.port}"
        for session, text in (("a", "I am a"), ("b", "I am b"), ("a", "/new"), ("b", "again")):
            async with client.post(url + "/api/chat", json={"session": session, "text": text}):
                pass
        assert said(fake.requests[-1])[0] == "I am b"
    finally:
        await host.stop()


async def test_new_in_the_terminal_chat(home, tmp_path, fake):
    config = write_config(tmp_path / "c.yaml", {"llm": fake.openai_config()})
    fake.script = [{"text": "First reply."}, {"text": "Second reply."}]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bothost", "--config", str(config), "chat",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**os.environ, "BOTHOST_HOME": str(home)},
    )  # fmt: skip
    out, err = await asyncio.wait_for(
        process.communicate(b"my name is Ada\n/new\nwhat is my name?\n"), COMMAND_SECONDS
    )
    assert process.returncode == 0, err.decode()
    assert out.decode().splitlines() == [
        "First reply.",
        "Started a new conversation.",
        "Second reply.",
    ]
    assert said(fake.requests[1]) == ["what is my name?"]


async def test_chat_new_starts_the_terminal_conversation_afresh(home, tmp_path, fake):
    config = write_config(tmp_path / "c.yaml", {"llm": fake.openai_config()})
    fake.script = [{"text": "Noted."}, {"text": "I do not know."}]

    async def chat(*args: str) -> str:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bothost", "--config", str(config), "chat", *args,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env={**os.environ, "BOTHOST_HOME": str(home)},
        )  # fmt: skip
        out, err = await asyncio.wait_for(process.communicate(), COMMAND_SECONDS)
        assert process.returncode == 0, err.decode()
        return out.decode()

    assert await chat("-m", "my name is Ada") == "Noted.\n"
    assert await chat("--new", "-m", "what is my name?") == "I do not know.\n"
    assert said(fake.requests[1]) == ["what is my name?"]
