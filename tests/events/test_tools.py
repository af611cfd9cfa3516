"""The events plugin: its tools on a real host, and the offline agent's commands."""

from __future__ import annotations

from types import SimpleNamespace

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
        assert applied == [("events",)] * 3  # indexes: ticks, pending per source, claim order

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


def test_the_plugin_teaches_the_offline_agent_through_its_hook():
    commands = {}
    plugin.register_offline_commands(register=lambda word, help, run: commands.update({word: run}))
    assert commands["events"](" failed") == ("events_list", {"status": "failed"})
    assert commands["tick"]("") == ("tick_now", {})
    assert commands["triage"]("list") == ("triage_rules", {"action": "list"})


async def test_a_built_host_offers_the_commands_without_starting(home):
    runtime = Runtime()
    host = runtime.host()
    try:
        assert {"events", "tick", "triage"} <= set(host.offline_commands)
        assert "events [STATUS]" in host.llm.help()
    finally:
        runtime.close()
