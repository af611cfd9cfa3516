"""Questions in Slack: tool approvals with buttons, and elicitations answered in a modal."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from tests.slack.harness import ADMIN, ALICE, BOB, GENERAL

WIPE = 'call wipe {"target": "db-1"}'
SUDO = "call sudo_check {}"


async def question_in(bot, thread: str, action_id: str) -> str:
    """The ts of the bot's message in ``thread`` that carries button ``action_id``."""

    def find():
        for message in bot.fake.messages.get(GENERAL, []):
            blocks = json.dumps(message.get("blocks"))
            if message.get("thread_ts") == thread and action_id in blocks:
                return message["ts"]
        return None

    return await bot.fake.wait_for(find)


async def test_approve_runs_the_tool_and_wrong_user_is_refused(start_bot):
    bot = await start_bot()
    root = await bot.say(WIPE)
    ts = await question_in(bot, root, "bothost_approve")
    assert "wipe" in bot.fake.message(GENERAL, ts)["text"]
    await bot.fake.click(BOB, GENERAL, ts, "bothost_approve")
    refusal = await bot.fake.wait_call("chat.postEphemeral")
    assert refusal.args["user"] == BOB and ALICE in refusal.args["text"]
    assert "wiped" not in bot.thread(GENERAL, root)
    await bot.fake.click(ALICE, GENERAL, ts, "bothost_approve")
    await bot.wait_reply(GENERAL, root, "wiped db-1")
    decided = json.dumps(bot.fake.message(GENERAL, ts)["blocks"])
    assert "Approved by <@UALICE>" in decided and "bothost_approve" not in decided
    rows = bot.host.store.call(lambda db: db.query("SELECT * FROM approvals ORDER BY 1"))
    assert [(r["decision"], r["decided_by"]) for r in rows] == [("allow", ALICE)]


async def test_allow_for_this_conversation_is_remembered_in_the_thread(start_bot):
    bot = await start_bot()
    root = await bot.say(WIPE)
    ts = await question_in(bot, root, "bothost_approve_conversation")
    buttons = json.dumps(bot.fake.message(GENERAL, ts)["blocks"])
    assert "Allow for this conversation" in buttons and "bothost_approve_always" in buttons
    await bot.fake.click(ALICE, GENERAL, ts, "bothost_approve_conversation")
    await bot.wait_reply(GENERAL, root, "wiped db-1")
    decided = json.dumps(bot.fake.message(GENERAL, ts)["blocks"])
    assert "Approved by <@UALICE> (allow for this conversation)" in decided
    assert "bothost_approve" not in decided
    asked = len([m for m in bot.fake.messages[GENERAL] if "bothost_approve" in str(m)])
    await bot.say('call wipe {"target": "db-2"}', thread_ts=root, mention=False)
    await bot.wait_reply(GENERAL, root, "wiped db-2")  # no second question in this thread
    assert len([m for m in bot.fake.messages[GENERAL] if "bothost_approve" in str(m)]) == asked
    from bothost.rules import store as rule_store

    _, answers = bot.host.store.call(rule_store.load)
    assert [(a.spec.tool, a.spec.who.conversation, a.created_by) for a in answers] == [
        ("wipe", f"slack:{GENERAL}:{root}", f"slack:{ALICE}")
    ]


async def test_deny_by_an_admin(start_bot):
    bot = await start_bot()
    root = await bot.say(WIPE)
    ts = await question_in(bot, root, "bothost_deny")
    await bot.fake.click(ADMIN, GENERAL, ts, "bothost_deny")
    text = await bot.wait_reply(GENERAL, root, "Not allowed")
    assert "wiped" not in text
    assert "Denied by <@UADMIN>" in json.dumps(bot.fake.message(GENERAL, ts)["blocks"])


async def test_no_answer_in_time_means_deny(start_bot):
    bot = await start_bot(agent={"approval_timeout": "300ms"})
    root = await bot.say(WIPE)
    ts = await question_in(bot, root, "bothost_approve")
    stale = bot.fake.click_payload(ALICE, GENERAL, ts, "bothost_approve")
    await bot.wait_reply(GENERAL, root, "Not allowed")
    assert "no answer within" in json.dumps(bot.fake.message(GENERAL, ts)["blocks"])
    await bot.fake.envelope("interactive", stale)  # a click that arrives too late
    late = await bot.fake.wait_call("chat.postEphemeral")
    assert "no longer waiting" in late.args["text"]
    assert "wiped" not in bot.thread(GENERAL, root)


async def test_elicitation_is_answered_in_a_modal_and_never_echoed(start_bot, caplog):
    caplog.set_level(logging.DEBUG)
    bot = await start_bot()
    root = await bot.say(SUDO)
    ts = await question_in(bot, root, "bothost_form_open")
    await bot.fake.click(BOB, GENERAL, ts, "bothost_form_open")  # not the requester
    await bot.fake.wait_call("chat.postEphemeral")
    assert not bot.fake.called("views.open")
    await bot.fake.click(ALICE, GENERAL, ts, "bothost_form_open")
    opened = await bot.fake.wait_call("views.open")
    view = opened.args["view"]
    assert opened.args["trigger_id"].startswith("trigger-")
    inputs = {b["block_id"]: b for b in view["blocks"] if b["type"] == "input"}
    assert inputs["password"]["element"]["type"] == "plain_text_input"
    assert "initial_value" not in inputs["password"]["element"]
    assert inputs["port"]["element"]["type"] == "number_input"
    password = "hunter2-very-secret"
    bad = await bot.fake.submit(
        ALICE,
        bot.fake.views[-1],
        {
            "password": {"value": {"type": "plain_text_input", "value": password}},
            "port": {"value": {"type": "number_input", "value": "twenty"}},
        },
    )
    assert bad["payload"]["response_action"] == "errors" and "port" in bad["payload"]["errors"]
    await bot.fake.submit(
        ALICE,
        bot.fake.views[-1],
        {
            "password": {"value": {"type": "plain_text_input", "value": password}},
            "remember": {"value": {"type": "checkboxes", "selected_options": [{"value": "true"}]}},
            "port": {"value": {"type": "number_input", "value": "2222"}},
        },
    )
    text = await bot.wait_reply(GENERAL, root, "got a password of 19 characters")
    assert "remember=True, port=2222" in text
    assert "Answered by <@UALICE>" in json.dumps(bot.fake.message(GENERAL, ts)["blocks"])
    everything_posted = json.dumps([c.args for c in bot.fake.calls])
    assert password not in everything_posted
    assert password not in caplog.text


async def test_elicitation_declined(start_bot):
    bot = await start_bot()
    root = await bot.say(SUDO)
    ts = await question_in(bot, root, "bothost_form_decline")
    await bot.fake.click(ALICE, GENERAL, ts, "bothost_form_decline")
    await bot.wait_reply(GENERAL, root, "no answer (False)")
    assert "Declined by <@UALICE>" in json.dumps(bot.fake.message(GENERAL, ts)["blocks"])


async def test_mcp_server_elicitation_reaches_a_modal(start_bot, monkeypatch):
    root_dir = Path(__file__).resolve().parents[2]
    monkeypatch.setenv("PYTHONPATH", str(root_dir))
    server = {
        "command": sys.executable,
        "args": [str(root_dir / "tests" / "mcp_servers" / "echo_server.py")],
        "env_passthrough": ["PYTHONPATH"],
    }
    bot = await start_bot(
        with_mcp=True, **{"mcp": {"servers": {"echo": server, "weather": {"enabled": False}}}}
    )
    if getattr(bot.host.mcp, "ask", None) is None:
        # MCP sessions declare the elicitation capability only when the manager has a
        # default `ask`; bothost/host/wiring.py does not pass one yet, so servers never elicit.
        pytest.skip("the MCP manager is built without `ask` (bothost/host/wiring.py start_mcp)")
    root = await bot.say('call mcp__echo__ask {"question": "Your name?"}')
    ts = await question_in(bot, root, "bothost_form_open")
    assert "Your name?" in bot.fake.message(GENERAL, ts)["text"]
    await bot.fake.click(ALICE, GENERAL, ts, "bothost_form_open")
    await bot.fake.wait_call("views.open")
    await bot.fake.submit(
        ALICE,
        bot.fake.views[-1],
        {"answer": {"value": {"type": "plain_text_input", "value": "Ada"}}},
    )
    await bot.wait_reply(GENERAL, root, "answer: Ada")


async def test_stop_while_asking_takes_the_buttons_away(start_bot):
    bot = await start_bot()
    root = await bot.say(WIPE)
    ts = await question_in(bot, root, "bothost_approve")
    await bot.say("stop", thread_ts=root, mention=False)
    await bot.wait_reply(GENERAL, root, "Stopped.")
    await bot.fake.wait_for(
        lambda: "Cancelled" in json.dumps(bot.fake.message(GENERAL, ts)["blocks"])
    )
    assert "bothost_approve" not in json.dumps(bot.fake.message(GENERAL, ts)["blocks"])
