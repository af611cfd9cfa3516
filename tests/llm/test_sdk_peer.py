"""Our providers and the official SDKs, driven against the same fake scripts, agree.

bothost speaks the Chat Completions and Messages APIs itself (bothost.llm.wire); the vendors'
SDKs stay in the test extra as the peer: each scenario runs once through the SDK's own
stream accumulator (``chat.completions.stream`` / ``messages.stream``) and once through our
provider, against ``tests/fakes/llm.py``, and the outcomes must be the same — the answer
(text, tool calls, usage, stop reason), the refusal (status and the server's message), or a
cut answer — after the same number of requests. A mistake in the fake's wire format shows
here as the SDK disagreeing with it.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from bothost.config import LlmConfig
from bothost.llm.anthropic import AnthropicProvider
from bothost.llm.anthropic import usage_of as anthropic_usage_of
from bothost.llm.base import ChatRequest, LlmError, StreamCutError
from bothost.llm.openai import OpenAIProvider
from bothost.llm.openai import usage_of as openai_usage_of

MAX_RETRIES = 2
TEXT = 'A reply long enough to arrive in several deltas, with ünïcode and a "quote".'
TOOL = {
    "name": "lookup",
    "description": "Look a thing up.",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
}
CALLS = [
    {"id": "call_a", "name": "lookup", "arguments": {"q": "the weather in Zürich tomorrow"}},
    {"id": "call_b", "name": "lookup", "arguments": {"q": "x" * 40, "n": [1, 2, {"deep": None}]}},
]
SCENARIOS: dict[str, list[dict[str, Any]]] = {
    "text": [{"text": TEXT}],
    "tool calls split across chunks": [{"text": "Looking.", "tool_calls": CALLS}],
    "usage with cached tokens": [
        {"text": "ok", "usage": {"input": 500, "output": 9, "cached": 300, "cache_write": 50}}
    ],
    "an error status": [{"status": 400, "message": "max_tokens: 99999999 > 8192, too many"}],
    "a 429 with retry-after then success": [{"status": 429, "retry_after": 0}, {"text": "at last"}],
    "5xx until the retries run out": [{"status": 503, "retry_after_ms": 1}] * (MAX_RETRIES + 1),
    "a stream that ends early": [{"text": TEXT, "cut": "eof", "cut_after": 4}],
    "a stream whose connection drops": [{"tool_calls": CALLS, "cut": "reset", "cut_after": 5}],
    "an error event mid-stream": [{"text": TEXT, "cut": "error", "cut_after": 3}],
}
# OpenAI's SDK gives up on a retry-after past two minutes (we past one); Anthropic's waits it
OPENAI_ONLY = {"a retry-after of an hour": [{"status": 429, "retry_after": 3600}]}


def request() -> ChatRequest:
    return ChatRequest(
        system="Be brief.",
        messages=[{"role": "user", "content": "hi"}],
        tools=[TOOL],
        max_tokens=100,
    )


async def ours(flavour: str, url: str) -> dict[str, Any]:
    config = LlmConfig(
        provider=flavour, model="m", api_key="test-key", base_url=url, max_retries=MAX_RETRIES
    )
    provider = OpenAIProvider(config) if flavour == "openai" else AnthropicProvider(config)
    try:
        response = await provider.complete(request())
    except StreamCutError:
        return {"cut": True}
    except LlmError as exc:
        status, _, rest = str(exc).partition(" from ")
        return {"status": int(status), "said": rest}
    finally:
        await provider.close()
    return {
        "text": response.text,
        "calls": [(c.id, c.name, c.arguments) for c in response.tool_calls],
        "usage": response.usage,
        "stop": response.stop_reason,
    }


def body_message(body: Any) -> str:
    error = body.get("error", body) if isinstance(body, dict) else {}
    return error.get("message", "") if isinstance(error, dict) else ""


async def sdk_openai(url: str) -> dict[str, Any]:
    client = openai.AsyncOpenAI(api_key="test-key", base_url=url, max_retries=MAX_RETRIES)
    try:
        stream = client.chat.completions.stream(
            model="m",
            messages=[{"role": "system", "content": "Be brief."}, *request().messages],
            tools=[{"type": "function", "function": TOOL}],
            max_tokens=100,
            stream_options={"include_usage": True},
        )
        try:
            manager = await stream.__aenter__()
        except openai.APIStatusError as exc:
            return {"status": exc.status_code, "said": body_message(exc.body)}
        try:
            completion = await manager.get_final_completion()
        except (openai.APIError, httpx2.TransportError):
            return {"cut": True}
        finally:
            await stream.__aexit__(None, None, None)
    finally:
        await client.close()
    choice = completion.choices[0]
    if choice.finish_reason is None:
        return {"cut": True}
    calls = choice.message.tool_calls or []
    return {
        "text": choice.message.content or "",
        "calls": [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls],
        "usage": openai_usage_of(completion.usage.model_dump()) if completion.usage else None,
        "stop": choice.finish_reason,
    }


async def sdk_anthropic(url: str) -> dict[str, Any]:
    client = anthropic.AsyncAnthropic(api_key="test-key", base_url=url, max_retries=MAX_RETRIES)
    try:
        stream = client.messages.stream(
            model="m",
            system="Be brief.",
            messages=request().messages,
            tools=[
                {
                    "name": t["name"],
                    "description": t["description"],
                    "input_schema": t["parameters"],
                }
                for t in request().tools
            ],
            max_tokens=100,
        )
        try:
            manager = await stream.__aenter__()
        except anthropic.APIStatusError as exc:
            return {"status": exc.status_code, "said": body_message(exc.body)}
        try:
            message = await manager.get_final_message()
        except (anthropic.APIError, httpx2.TransportError):
            return {"cut": True}
        finally:
            await stream.__aexit__(None, None, None)
    finally:
        await client.close()
    if message.stop_reason is None:
        return {"cut": True}
    return {
        "text": "".join(b.text for b in message.content if b.type == "text"),
        "calls": [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"],
        "usage": anthropic_usage_of(message.usage.model_dump()),
        "stop": message.stop_reason,
    }


CASES = [(f, name) for f in ("openai", "anthropic") for name in SCENARIOS] + [
    ("openai", name) for name in OPENAI_ONLY
]


@pytest.mark.parametrize(("flavour", "scenario"), CASES)
async def test_our_provider_and_the_sdk_see_the_same_outcome(fake_llm, flavour, scenario):
    script = {**SCENARIOS, **OPENAI_ONLY}[scenario]
    url = fake_llm.openai_url if flavour == "openai" else fake_llm.anthropic_url
    fake_llm.usage = {"input": 40, "output": 12}

    fake_llm.script = [dict(step) for step in script]
    theirs = await (sdk_openai if flavour == "openai" else sdk_anthropic)(url)
    their_requests = len(fake_llm.requests)

    fake_llm.script = [dict(step) for step in script]
    mine = await ours(flavour, url)
    my_requests = len(fake_llm.requests) - their_requests

    assert my_requests == their_requests, (mine, theirs)
    if "said" in theirs:  # we say the server's message inside our one line
        assert mine["status"] == theirs["status"], (mine, theirs)
        assert theirs["said"] and theirs["said"] in mine["said"], (mine, theirs)
    else:
        assert mine == theirs
    # and what we asked is what the SDK asks for the same call
    assert fake_llm.requests[their_requests] == fake_llm.requests[0]
