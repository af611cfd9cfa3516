"""The tick agent's model calls are the tick's, and a spent budget makes the tick fall back
to its rules, saying so in the briefing's footer. A host with the fake OpenAI server."""

from __future__ import annotations

import re

import pytest

from bothost.models import Address, IncomingMessage
from tests.fakes.llm import FakeLlm
from tests.helpers import make_host


def notify_all(body):
    text = body["messages"][-1]["content"]
    ids = [int(i) for i in re.findall(r'<event id="(\d+)"', text)]
    item = {"priority": "high", "summary": "Rain soon", "event_ids": ids}
    return {"tool_calls": [{"name": "notify", "arguments": {"items": [item]}}]}


@pytest.fixture
async def fake_llm():
    fake = await FakeLlm(usage={"input": 90, "output": 20}).start()
    yield fake
    await fake.stop()


async def start_host(home, fake_llm, budgets):
    host = make_host(
        home,
        {
            "llm": fake_llm.openai_config("fake-model"),
            "tick": {"deliver_to": ["console:"]},
            "usage": {"budgets": budgets},
        },
    )
    await host.start(serve_http=False, mcp=False, tick=False)
    return host


def rows(host):
    return host.store.call(
        lambda db: db.execute(
            "SELECT kind, user_key, tick_id, input_tokens FROM llm_usage ORDER BY id"
        ).fetchall()
    )


async def test_the_tick_falls_back_to_its_rules_when_its_budget_is_spent(home, fake_llm):
    host = await start_host(home, fake_llm, {"tick_daily": {"tokens": 100}})
    try:
        fake_llm.script = [notify_all]
        await host.ingest_event("weather", "event/weather_alert", {"id": "1", "summary": "Rain"})
        first = await host.tick_now("manual")
        assert "• Rain soon" in first.briefings[0].text
        assert "budget" not in first.briefings[0].text
        tick_id = first.tick_id
        assert rows(host) == [("tick", None, tick_id, 90)]  # the tick's, no person's

        await host.ingest_event("weather", "event/weather_alert", {"id": "2", "summary": "Hail"})
        second = await host.tick_now("manual")
        assert len(fake_llm.requests) == 1  # the model was not asked again
        lines = second.briefings[0].text.splitlines()
        assert lines[1:3] == ["FYI", lines[2]] and "Hail" in lines[2]  # the rules' triage
        assert lines[-1] == (
            "Sorted by tick.rules, not the model: the tick's daily model budget is spent "
            "(110 of 100 tokens; usage.budgets.tick_daily)."
        )
        assert second.briefings[0].footer == lines[-1]
        assert len(rows(host)) == 1
    finally:
        await host.stop()


async def test_people_spending_the_global_budget_stops_the_tick_model_too(home, fake_llm):
    host = await start_host(home, fake_llm, {"global_daily": {"tokens": 100}})
    try:
        fake_llm.script = [{"text": "hello"}]
        chat = IncomingMessage(address=Address("test", "c1"), text="hi", user="ana")
        await host.handle_message(chat)
        await host.ingest_event("weather", "event/weather_alert", {"id": "1", "summary": "Rain"})
        result = await host.tick_now("manual")
        assert len(fake_llm.requests) == 1
        assert (
            result.briefings[0]
            .text.splitlines()[-1]
            .startswith(
                "Sorted by tick.rules, not the model: the bot's daily model budget is spent "
            )
        )
    finally:
        await host.stop()
