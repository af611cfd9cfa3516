"""The events plugin: its tools on a real host, and the offline agent's commands."""

from __future__ import annotations

from types import SimpleNamespace

from bothost.agent.registry import ToolRegistry
from bothost.cli.runtime import Runtime
from bothost.events import plugin


async def test_the_plugin_registers_tools_that_list_and_tick(home):
    (home / "bothost.yaml").write_text("tick: {deliver_to: ['console:']}\n")
    runtime = Runtime()
    host = runtime.host()
    try:
        assert {"events_list", "tick_now"} <= set(host.registry.native)
        assert host.registry.native["events_list"].capabilities.untrusted
        applied = host.store.call(
            lambda db: db.execute(
                "SELECT component FROM _migrations WHERE component = 'events'"
            ).fetchall()
        )
        assert applied == [("events",)]

        await runtime.ingest_event("gmail", "event/new_email", {"id": "1", "subject": "Hello"})
        ctx = SimpleNamespace(host=host)
        listing = await host.registry.native["events_list"].run({"status": "pending"}, ctx)
        assert listing == "#1 pending - gmail/event/new_email: Hello"
        text = await host.registry.native["tick_now"].run({}, ctx)
        assert text.startswith("Briefing · ") and "Hello" in text
        again = await host.registry.native["tick_now"].run({}, ctx)
        assert again == "Nothing to brief: 0 events looked at."
    finally:
        runtime.close()


def test_startup_teaches_the_offline_agent():
    host = SimpleNamespace(offline_commands={}, registry=ToolRegistry())
    plugin.startup(host)
    assert host.offline_commands["events"][1](" failed") == ("events_list", {"status": "failed"})
    assert host.offline_commands["tick"][1]("") == ("tick_now", {})
