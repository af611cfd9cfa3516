"""A briefing item's "Less like this" in Slack: the proposed rule in the briefing's thread,
applied only when an admin presses [Apply]; anyone else is told who can."""

from __future__ import annotations

import json
import time

from bothost.events import triage_store
from bothost.events.triage import QueuedEvent
from bothost.host.dryrun import dry_run
from bothost.models import Briefing, BriefingItem
from tests.slack.harness import ADMIN, ALICE, BOB

CHANNEL = "C0BRIEF"
DEALS = {
    "id": "m1",
    "summary": "New email from Deals Weekly <news@deals.example>: 50% off",
    "from": "Deals Weekly <news@deals.example>",
    "labels": ["INBOX"],
}
PROPOSAL = "Less like this: mail from news@deals.example → low (was normal)."
REFUSAL = f"Only admins can change triage: ask <@{ADMIN}>."


def briefing(ids: list[int]) -> Briefing:
    item = BriefingItem("normal", DEALS["summary"], "", ids, source="gmail")
    return Briefing("Briefing", [item], "Briefing\nFYI\n• 50% off", targets=[])


def stored(host):
    return host.store.call(triage_store.load)[0]


async def next_priority(host) -> str:
    """What the next tick would make of another mail from the same sender."""
    event = QueuedEvent(1, "gmail", "event/new_email", {**DEALS, "id": "m2"}, time.time())
    _, decision = await dry_run(host, [event], time.time())
    return decision.triage.priorities[1]


async def test_less_like_this_is_proposed_in_the_thread_and_applied_by_an_admin(start_bot):
    bot = await start_bot()
    ids = [await bot.host.ingest_event("gmail", "event/new_email", DEALS)]
    ts = await bot.host.deliver(f"slack:{CHANNEL}", briefing(ids))
    labels = [
        e["text"]["text"]
        for b in bot.fake.message(CHANNEL, ts)["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
    ]
    assert labels[-2:] == ["Less like this", "More like this"]

    # a person on the list (not an admin) asks: the proposal says who may apply it
    await bot.fake.click(ALICE, CHANNEL, ts, "bothost_less")
    posted = await bot.fake.wait_call("chat.postMessage", lambda a: a.get("thread_ts") == ts)
    assert posted.args["text"] == PROPOSAL
    assert REFUSAL in json.dumps(posted.args["blocks"])
    proposal = next(m for m in bot.fake.messages[CHANNEL] if m.get("thread_ts") == ts)

    # pressing [Apply] is not enough for them: told privately, nothing stored
    await bot.fake.click(ALICE, CHANNEL, proposal["ts"], "bothost_triage_apply")
    told = await bot.fake.wait_call("chat.postEphemeral")
    assert told.args["text"] == REFUSAL and told.args["user"] == ALICE
    assert stored(bot.host) == []
    assert await next_priority(bot.host) == "normal"

    # the admin applies it: the rule is stored as the button's, and the next tick uses it
    await bot.fake.click(ADMIN, CHANNEL, proposal["ts"], "bothost_triage_apply")
    update = await bot.fake.wait_call("chat.update")
    assert "✓ Added triage rule #1: type=event/new_email" in json.dumps(
        update.args["blocks"], ensure_ascii=False
    )
    assert not [b for b in update.args["blocks"] if b["type"] == "actions"]
    [rule] = stored(bot.host)
    assert (rule.origin, rule.added_by, rule.rule.priority) == ("button", f"slack:{ADMIN}", "low")
    assert rule.rule.match == {"type": "event/new_email", "payload.from": "news@deals.example"}
    assert await next_priority(bot.host) == "low"


async def test_a_stranger_gets_no_proposal_and_cancel_changes_nothing(start_bot):
    bot = await start_bot()
    ids = [await bot.host.ingest_event("gmail", "event/new_email", DEALS)]
    ts = await bot.host.deliver(f"slack:{CHANNEL}", briefing(ids))
    await bot.fake.click(BOB, CHANNEL, ts, "bothost_more")
    refusal = await bot.fake.wait_call("chat.postEphemeral")
    assert BOB in refusal.args["text"]
    assert not [m for m in bot.fake.messages[CHANNEL] if m.get("thread_ts") == ts]

    await bot.fake.click(ADMIN, CHANNEL, ts, "bothost_more")
    posted = await bot.fake.wait_call("chat.postMessage", lambda a: a.get("thread_ts") == ts)
    assert (
        posted.args["text"] == "More like this: mail from news@deals.example → high (was normal)."
    )
    assert "Only admins" not in json.dumps(posted.args["blocks"])
    proposal = next(m for m in bot.fake.messages[CHANNEL] if m.get("thread_ts") == ts)
    await bot.fake.click(ADMIN, CHANNEL, proposal["ts"], "bothost_triage_cancel")
    update = await bot.fake.wait_call("chat.update")
    assert f"Cancelled by <@{ADMIN}>" in json.dumps(update.args["blocks"])
    assert stored(bot.host) == []
