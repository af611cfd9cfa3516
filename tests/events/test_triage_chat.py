"""Triage rules taught in chat: the model's ``add_triage_rule`` and the offline agent's
``triage …`` words change the next tick, survive a restart, and are for admins only."""

from __future__ import annotations

from bothost.config import TickConfig
from bothost.events import triage_store
from bothost.events.tick import run_tick
from bothost.models import Address, IncomingMessage
from tests.events.conftest import Recorder
from tests.fakes.llm import last_tool_result
from tests.helpers import make_host

ANA = {"id": "a1", "from": "Ana Lopez <ana@corp.example>", "summary": "Lunch tomorrow?"}
TICK = {"deliver_to": ["console:"], "timezone": "Europe/Zurich"}


def message(text: str, is_admin: bool) -> IncomingMessage:
    return IncomingMessage(address=Address("test", "c1"), text=text, user="ana", is_admin=is_admin)


async def tick_text(host, event_id: str) -> str:
    """One offline tick on the host's store after a fresh mail from Ana; the briefing."""
    await host.ingest_event("gmail", "event/new_email", {**ANA, "id": event_id})
    recorder = Recorder()
    await run_tick(host.store, TickConfig(**TICK), recorder)
    return recorder.texts()[0]


def stored(host):
    return host.store.call(triage_store.load)


async def test_a_rule_added_in_chat_changes_the_next_tick_and_survives_a_restart(home, fake_llm):
    host = make_host(home, {"llm": fake_llm.openai_config("m"), "tick": TICK})
    await host.start(serve_http=False, mcp=False, tick=False)
    try:
        assert "FYI\n• Lunch tomorrow?" in await tick_text(host, "before")
        fake_llm.script = [
            {
                "tool_calls": [
                    {
                        "name": "add_triage_rule",
                        "arguments": {
                            "match": {"payload.from": "ana@corp.example"},
                            "priority": "high",
                            "note": "mail from Ana is always important",
                        },
                    }
                ]
            },
            lambda body: {"text": last_tool_result(body)},
        ]
        reply = await host.handle_message(message("mail from Ana is always important", True))
        assert reply.text == (
            "Added triage rule #1: payload.from=ana@corp.example → high (mail from Ana is "
            "always important). It applies from the next tick; `triage remove 1` takes it back."
        )
        assert "HIGH\n• Lunch tomorrow?" in await tick_text(host, "after")
    finally:
        await host.stop()

    again = make_host(home, {"tick": TICK})  # a restart, with no model this time
    await again.start(serve_http=False, mcp=False, tick=False)
    try:
        [rule], [] = stored(again)
        assert (rule.origin, rule.added_by) == ("chat", "test:ana")
        assert "HIGH\n• Lunch tomorrow?" in await tick_text(again, "restarted")
    finally:
        await again.stop()


async def test_a_non_admin_is_told_who_can_and_nothing_changes(home, fake_llm):
    host = make_host(home, {"llm": fake_llm.openai_config("m"), "tick": TICK})
    await host.start(serve_http=False, mcp=False, tick=False)
    try:
        fake_llm.script = [
            {
                "tool_calls": [
                    {
                        "name": "add_triage_rule",
                        "arguments": {"match": {"source": "*"}, "priority": "drop"},
                    }
                ]
            },
            lambda body: {"text": last_tool_result(body)},
        ]
        reply = await host.handle_message(message("drop everything", False))
        assert reply.text.startswith("Only an admin can change triage rules: ")
        assert "bothost triage add" in reply.text
        assert stored(host) == ([], [])
    finally:
        await host.stop()


async def test_the_offline_agent_takes_the_command_lines_words(home):
    host = make_host(home, {"tick": TICK})
    await host.start(serve_http=False, mcp=False, tick=False)
    try:

        async def say(text: str, is_admin: bool = True) -> str:
            return (await host.handle_message(message(text, is_admin))).text

        added = await say("triage add payload.from=*@corp.example priority=high note=corp mail")
        assert added.startswith("Added triage rule #1: payload.from=*@corp.example → high")
        assert "HIGH\n• Lunch tomorrow?" in await tick_text(host, "offline")
        test = (
            '{"source": "gmail", "type": "event/new_email", "payload": {"from": "x@corp.example"}}'
        )
        assert await say(f"triage test {test}") == "high — #1 (corp mail)"
        assert "#1: payload.from=*@corp.example → high" in await say("triage list")

        refused = await say("triage remove 1", is_admin=False)
        assert refused.startswith("Only an admin can change triage rules")
        assert await say("triage remove default:gmail-social") == (
            "Removed default:gmail-social; `triage restore default:gmail-social` brings it back."
        )
        assert await say("triage remove 1") == "Removed triage rule #1."
        assert "priority=P" in await say("triage add payload.from=x")
    finally:
        await host.stop()
