"""Briefings in Slack: Block Kit with a text fallback, and buttons that change the events."""

from __future__ import annotations

import json

from bothost.plugins.slack.blocks import MAX_BLOCKS, decode_ids, encode_ids, render

from bothost.models import Briefing, BriefingItem
from tests.slack.harness import ALICE, BOB

CHANNEL = "C0BRIEF"


async def queued(host, n: int, **payload) -> list[int]:
    ids = []
    for i in range(n):
        body = {"id": f"e{len(ids)}-{i}-{payload}", "summary": f"event {i}", **payload}
        ids.append(await host.ingest_event("gmail", "event/new_email", body))
    return ids


def briefing(urgent: list[int], fyi: list[int]) -> Briefing:
    return Briefing(
        title="Briefing · Wed 08:00 · 3 events",
        items=[
            BriefingItem(
                "urgent", "db-1 disk at 95%", "nightly backup will fail", urgent, source="ssh"
            ),
            BriefingItem("normal", "Rain in Zurich from 17:00", "", fyi, source="weather"),
        ],
        text="Briefing · Wed 08:00\nURGENT\n• db-1 disk at 95%\nFYI\n• Rain in Zurich",
        targets=[f"slack:{CHANNEL}"],
        low_count=2,
        muted_count=4,
        muted_summary="newsletters",
    )


def status(host, ids):
    return host.store.call(
        lambda db: [
            r[0]
            for r in db.execute(
                f"SELECT status FROM events WHERE id IN ({','.join(map(str, ids))}) ORDER BY id"
            )
        ]
    )


async def test_briefing_is_posted_as_blocks_and_acknowledged_by_a_click(start_bot):
    bot = await start_bot()
    urgent = await queued(bot.host, 2)
    fyi = await queued(bot.host, 1, location="Zurich")
    ts = await bot.host.deliver(f"slack:{CHANNEL}", briefing(urgent, fyi))
    post = bot.fake.called("chat.postMessage")[-1].args
    assert post["text"].startswith("Briefing · Wed 08:00")
    blocks = post["blocks"]
    assert blocks[0]["type"] == "header"
    texts = json.dumps(blocks)
    for expected in (
        "URGENT",
        "FYI",
        "db-1 disk at 95%",
        "nightly backup will fail",
        "+ 2 low",
        "Muted: 4 (newsletters)",
    ):
        assert expected in texts
    buttons = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert [b["text"]["text"] for b in buttons[:3]] == ["Acknowledge", "Snooze 4h", "Mute"]
    assert decode_ids(buttons[0]["value"]) == urgent

    ack = await bot.fake.click(ALICE, CHANNEL, ts, "bothost_ack")
    assert ack["envelope_id"]
    update = await bot.fake.wait_call("chat.update")
    assert "Acknowledged by <@UALICE>" in json.dumps(update.args["blocks"])
    assert status(bot.host, urgent) == ["done", "done"]
    assert status(bot.host, fyi) == ["pending"]
    # a second click (Slack redelivery) changes nothing more and does not fail
    bot.fake.messages[CHANNEL][-1]["blocks"] = blocks
    await bot.fake.click(ALICE, CHANNEL, ts, "bothost_ack")
    await bot.fake.wait_call("chat.update", count=2)
    assert status(bot.host, urgent) == ["done", "done"]


async def test_snooze_and_mute_buttons(start_bot):
    bot = await start_bot()
    urgent = await queued(bot.host, 1)
    fyi = await queued(bot.host, 2, location="Zurich")
    ts = await bot.host.deliver(f"slack:{CHANNEL}", briefing(urgent, fyi))
    await bot.fake.click(ALICE, CHANNEL, ts, "bothost_snooze")
    await bot.fake.wait_call("chat.update")
    assert status(bot.host, urgent) == ["snoozed"]
    # the FYI item's Mute button: the second actions block
    message = bot.fake.message(CHANNEL, ts)
    message["blocks"] = [b for b in message["blocks"] if b.get("block_id") != "item2"]
    await bot.fake.click(ALICE, CHANNEL, ts, "bothost_mute")
    await bot.fake.wait_call("chat.update", count=2)
    mutes = bot.host.store.call(lambda db: db.query("SELECT * FROM mutes ORDER BY 1"))
    assert len(mutes) == 1 and mutes[0]["source"] == "gmail"
    assert json.loads(mutes[0]["match"]) == {"payload.location": "Zurich"}


async def test_strangers_cannot_press_briefing_buttons(start_bot):
    bot = await start_bot()
    ids = await queued(bot.host, 1)
    ts = await bot.host.deliver(f"slack:{CHANNEL}", briefing(ids, []))
    await bot.fake.click(BOB, CHANNEL, ts, "bothost_ack")
    refusal = await bot.fake.wait_call("chat.postEphemeral")
    assert BOB in refusal.args["text"]
    assert status(bot.host, ids) == ["pending"]


def test_big_briefings_stay_within_slack_limits():
    items = [
        BriefingItem("high", "x" * 5000, "why", list(range(i * 1000, i * 1000 + 3)))
        for i in range(60)
    ]
    blocks, text = render(Briefing("T" * 400, items, "plain " * 2000, targets=[]))
    assert len(blocks) <= MAX_BLOCKS and len(text) <= 4000
    assert all(len(b.get("text", {}).get("text", "")) <= 3000 for b in blocks)
    assert len(blocks[0]["text"]["text"]) <= 150
    assert "more" in json.dumps(blocks)
    assert encode_ids(list(range(1, 100_000, 2))) is None  # too long for a button value
    assert decode_ids(encode_ids([1, 2, 3, 7, 9, 10])) == [1, 2, 3, 7, 9, 10]
