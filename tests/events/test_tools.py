"""The agent's tools over the queue, exercised on a stand-in host."""

from __future__ import annotations

from types import SimpleNamespace

from bothost.agent.registry import ToolRegistry
from bothost.config import Config
from bothost.events.tick import Ticker
from bothost.events.tools import register_event_tools
from bothost.models import Event


async def test_the_tools_list_events_and_tick(store, queue, recorder):
    config = Config()
    config.tick.deliver_to = ["console:"]
    host = SimpleNamespace(store=store, config=config, registry=ToolRegistry(),
                           offline_commands={}, pm=None, deliver=recorder, ticker=None)
    register_event_tools(host)
    assert {"events_list", "tick_now"} <= set(host.registry.native)
    assert host.offline_commands["events"][1]("pending") == ("events_list",
                                                             {"status": "pending"})

    await queue.ingest(Event("gmail", "event/new_email", {"id": "1", "subject": "Hello"}))
    listing = await host.registry.native["events_list"].run({"status": "pending"}, None)
    assert listing == "#1 pending - gmail/event/new_email: Hello"
    host.ticker = Ticker(store, config.tick, recorder)
    text = await host.registry.native["tick_now"].run({}, None)
    assert text.startswith("Briefing · ") and "Hello" in text
    assert await host.registry.native["tick_now"].run({}, None) == (
        "Nothing to brief: 0 events looked at.")
