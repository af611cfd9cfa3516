"""Model usage: every call recorded with its tokens and whose it was, and daily budgets that
refuse a turn before the model is asked. Against the fake OpenAI and Anthropic servers."""

from __future__ import annotations

import anthropic
import openai
import pytest

from bothost.api import Outcome
from bothost.llm.anthropic import usage_of as anthropic_usage_of
from bothost.llm.base import Usage
from bothost.llm.openai import usage_of as openai_usage_of
from tests.agent.conftest import llm_config, message, usage_rows

CACHED = {"input": 1200, "output": 40, "cached": 1000, "cache_write": 0}
NOON = 1_796_126_400.0  # 2026-12-01 12:00 UTC
DAY = 86400.0


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_streamed_calls_record_tokens_with_cached_ones_per_turn(started, fake_llm, provider):
    fake_llm.usage = dict(CACHED)
    fake_llm.script = [
        {"tool_calls": [{"name": "activate_tools", "arguments": {"groups": []}}]},
        {"text": "done", "usage": {"input": 1300, "output": 5, "cached": 1200, "cache_write": 100}},
    ]
    host = await started({"llm": llm_config(fake_llm, provider)})
    reply = await host.handle_message(message("hello"))
    assert reply.text == "done" and all(r.get("stream") for r in fake_llm.requests)

    rows = usage_rows(host)
    assert len(rows) == 2 and len({r["turn_id"] for r in rows}) == 1
    first, second = rows
    assert (first["input_tokens"], first["output_tokens"], first["cached_tokens"]) == (
        1200,
        40,
        1000,
    )
    assert first["estimated"] == 0 and first["model"] == "fake-model"
    assert first["provider"] == provider and first["kind"] == "turn"
    assert first["session_id"] == "test:c1" and first["user_key"] == "test:ana"
    assert first["tick_id"] is None
    # OpenAI has no cache-write figure in Chat Completions; Anthropic reports one
    expected_write = 100 if provider == "anthropic" else 0
    assert (second["input_tokens"], second["cached_tokens"]) == (1300, 1200)
    assert second["cache_write_tokens"] == expected_write


async def test_whole_responses_give_the_same_figures(fake_llm):
    """Non-streamed responses carry usage in the same shape: the SDKs parse the fake's
    JSON and our converters read it (as the JSON objects they came from) like the streamed
    figures."""
    fake_llm.usage = {"input": 500, "output": 9, "cached": 300, "cache_write": 50}
    client = openai.AsyncOpenAI(api_key="test-key", base_url=fake_llm.openai_url)
    whole = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}]
    )
    await client.close()
    assert openai_usage_of(whole.usage.model_dump()) == Usage(500, 9, 300)
    client2 = anthropic.AsyncAnthropic(api_key="test-key", base_url=fake_llm.anthropic_url)
    message_ = await client2.messages.create(
        model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
    )
    await client2.close()
    assert anthropic_usage_of(message_.usage.model_dump()) == Usage(500, 9, 300, 50)


async def test_a_server_that_reports_no_usage_is_estimated_and_marked(started, fake_llm):
    fake_llm.script = [{"text": "hello there", "usage": None}]
    host = await started({"llm": llm_config(fake_llm, "openai")})
    await host.handle_message(message("hi"))
    (row,) = usage_rows(host)
    assert row["estimated"] == 1 and row["input_tokens"] > 0 and row["output_tokens"] > 0


async def test_the_offline_agent_records_nothing(started):
    host = await started({})
    await host.handle_message(message("help"))
    assert usage_rows(host) == []


async def test_a_person_over_budget_is_refused_before_the_model_is_asked(started, fake_llm):
    fake_llm.usage = {"input": 120, "output": 7}
    host = await started(
        {
            "llm": llm_config(fake_llm, "openai"),
            "usage": {"budgets": {"user_daily": {"tokens": 100}}},
        }
    )
    now = [NOON]
    host.llm.clock = lambda: now[0]
    first = await host.handle_message(message("one"))
    assert first.outcome is Outcome.REPLIED and len(fake_llm.requests) == 1

    refused = await host.handle_message(message("two"))
    assert refused.outcome is Outcome.REFUSED
    assert "daily model budget is spent (127 of 100 tokens used today, UTC)" in refused.text
    assert "usage.budgets.user_daily" in refused.text
    assert len(fake_llm.requests) == 1  # the model never saw the second message

    other = await host.handle_message(message("hi", user="bo", channel="c2"))
    assert other.outcome is Outcome.REPLIED  # someone else's budget is their own

    now[0] = NOON + DAY / 2  # 00:00 UTC has passed: a new day
    assert (await host.handle_message(message("three"))).outcome is Outcome.REPLIED
    assert len(fake_llm.requests) == 3


async def test_a_cost_budget_for_everyone_uses_the_price_table(started, fake_llm):
    fake_llm.usage = {"input": 1_000_000, "output": 0, "cached": 500_000}
    prices = {"fake-model": {"input": 2.0, "output": 8.0, "cached": 0.5}}
    host = await started(
        {
            "llm": llm_config(fake_llm, "openai"),
            "usage": {"prices": prices, "budgets": {"global_daily": {"cost": 1.2}}},
        }
    )
    assert (await host.handle_message(message("one"))).outcome is Outcome.REPLIED
    refused = await host.handle_message(message("two", user="bo", channel="c2"))
    # 500k plain at 2.0 + 500k cached at 0.5 per million = 1.25 >= 1.2
    assert refused.outcome is Outcome.REFUSED
    assert "The bot's daily model budget is spent (1.25 of 1.20 USD" in refused.text
    assert len(fake_llm.requests) == 1


def test_an_anthropic_delta_without_input_figures_keeps_the_start_ones():
    """Older API versions send only output_tokens in message_delta."""
    from anthropic.types import MessageDeltaUsage
    from anthropic.types import Usage as StartUsage

    start = anthropic_usage_of(
        StartUsage(
            input_tokens=20,
            output_tokens=1,
            cache_read_input_tokens=100,
            cache_creation_input_tokens=5,
        ).model_dump()
    )
    delta = MessageDeltaUsage(output_tokens=30).model_dump()  # the others null
    assert anthropic_usage_of(delta, start) == Usage(125, 30, 100, 5)


async def test_a_turn_that_reaches_its_budget_between_rounds_stops_there(started, fake_llm):
    fake_llm.usage = {"input": 120, "output": 7}
    fake_llm.script = [
        {"tool_calls": [{"name": "activate_tools", "arguments": {"groups": []}}]},
        {"text": "never sent"},
    ]
    host = await started(
        {
            "llm": llm_config(fake_llm, "openai"),
            "usage": {"budgets": {"user_daily": {"tokens": 100}}},
        }
    )
    reply = await host.handle_message(message("go"))
    assert reply.outcome is Outcome.REFUSED and "Your daily model budget is spent" in reply.text
    assert len(fake_llm.requests) == 1 and len(usage_rows(host)) == 1
