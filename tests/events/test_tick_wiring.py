"""How the tick is put together: the notify tool, and the host's ticker from explicit parts."""

from __future__ import annotations

import asyncio

from bothost.agent.tools import ToolContext
from bothost.events.llm_triage import NOTIFY_SCHEMA, notify_tool
from bothost.host.wiring import build_ticker, tick_once
from tests.fakes.llm import openai_config
from tests.helpers import make_host


async def test_notify_is_a_plain_tool_that_hands_over_the_items_it_gets():
    taken = []
    tool = notify_tool(taken.extend)
    assert (tool.name, tool.schema) == ("notify", NOTIFY_SCHEMA)
    assert "Call once with every item" in tool.description
    item = {"priority": "high", "summary": "Budget review moved", "event_ids": [1]}
    answer = await tool.run(
        {"items": [item, "not an item"], "note": "extra key"}, ToolContext(session=None, host=None)
    )
    assert answer == "Noted 1 item." and taken == [item]  # not "1 items" (issue 39)
    again = await tool.run({"items": [item, item]}, ToolContext(session=None, host=None))
    assert again == "Noted 2 items."


def test_the_tick_triages_with_the_agent_only_when_a_model_is_configured(home):
    offline = make_host(home)
    assert build_ticker(offline).llm_triage is None
    with_model = make_host(
        home,
        {"llm": openai_config("http://127.0.0.1:9/v1")},
    )
    ticker = build_ticker(with_model)
    assert ticker.llm_triage is not None and ticker.store is with_model.store
    assert ticker.config is with_model.config.tick
    offline.store.close()
    with_model.store.close()


async def test_one_tick_without_a_running_ticker_delivers_and_records(home, capsys):
    host = make_host(home, {"tick": {"deliver_to": ["console:"]}})
    await host.start(serve_http=False, platforms=False, mcp=False, tick=False)
    try:
        assert host.ticker is None
        await host.ingest_event("ops", "alert", {"id": "a1", "summary": "db-1 disk at 95%"})
        result = await asyncio.wait_for(tick_once(host, "test"), 10)
    finally:
        await host.stop()
    assert result.status == "ok" and [b.targets for b in result.briefings] == [["console:"]]
    assert "db-1 disk at 95%" in capsys.readouterr().out
