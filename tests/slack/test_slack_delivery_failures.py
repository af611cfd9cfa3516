"""Briefings to Slack when Slack fails: each failure is recorded, retried, then reported.

Through a real host and the Slack platform against the fake Web API: a 429 with a short
``Retry-After`` is waited out and posted once; a 500 and ``channel_not_found`` are failed
attempts with Slack's error recorded, retried at the next tick and, after
``tick.max_attempts``, reported as failed — never dropped, and never holding up the
briefing's other target.
"""

from __future__ import annotations

import asyncio
import time

from bothost.events import feedback
from bothost.events.delivery import DELIVERY_TIMEOUT

CHANNEL = "C0BRIEF"


async def ticked(bot, n: int) -> None:
    await bot.host.ingest_event("ssh", "event/ssh_alert", {"id": f"a{n}", "summary": f"alert {n}"})
    await bot.host.tick_now("manual")


def deliveries(bot) -> list[dict]:
    listed = bot.host.store.call(lambda db: feedback.list_briefings(db))
    return [
        {**d, "briefing": b["id"], "briefing_status": b["status"]}
        for b in listed
        for d in b["deliveries"]
    ]


def posts(bot) -> int:
    return len(bot.fake.messages.get(CHANNEL, []))


async def test_a_short_rate_limit_is_waited_out_and_posted_once(start_bot):
    bot = await start_bot(tick={"deliver_to": [f"slack:{CHANNEL}"], "enabled": False})
    bot.fake.fail("chat.postMessage", status=429, headers={"Retry-After": "1"})
    await ticked(bot, 1)
    [row] = deliveries(bot)
    assert row["status"] == "delivered" and row["attempts"] == 1, row
    assert posts(bot) == 1


async def test_slack_errors_are_retried_then_reported_and_the_other_target_gets_it(start_bot):
    bot = await start_bot(
        tick={
            "deliver_to": [f"slack:{CHANNEL}", "web:briefings"],
            "enabled": False,
            "max_attempts": 3,
        }
    )
    bot.fake.fail("chat.postMessage", status=500)
    for _ in range(10):  # the channel was archived: it stays gone
        bot.fake.fail("chat.postMessage", error="channel_not_found")
    for tick in range(3):
        await ticked(bot, tick)
    first = [d for d in deliveries(bot) if d["briefing"] == 1]
    slack = next(d for d in first if d["target"].startswith("slack:"))
    web = next(d for d in first if d["target"] == "web:briefings")
    assert web["status"] == "delivered" and web["attempts"] == 1
    assert slack["status"] == "failed" and slack["attempts"] == 3, slack
    assert "channel_not_found" in slack["last_error"], slack
    assert first[0]["briefing_status"] == "partial"
    web_rows = [d for d in deliveries(bot) if d["target"] == "web:briefings"]
    assert len(web_rows) == 3 and {d["status"] for d in web_rows} == {"delivered"}
    assert posts(bot) == 0


async def test_a_long_rate_limit_fails_the_attempt_at_once_and_is_honoured_by_later_ticks(
    start_bot,
):
    """A Retry-After longer than a delivery may take is not slept through (the tick would
    wait out its whole deadline, and the next tick would post before Slack allowed): the
    attempt fails at once naming the wait, ticks before that time do not call Slack, and the
    first tick after it posts the briefing."""
    bot = await start_bot(tick={"deliver_to": [f"slack:{CHANNEL}"], "enabled": False})
    bot.fake.fail("chat.postMessage", status=429, headers={"Retry-After": "600"})
    async with asyncio.timeout(DELIVERY_TIMEOUT / 2):  # the tick does not wait it out
        await ticked(bot, 1)
    [row] = deliveries(bot)
    assert row["status"] == "pending" and row["attempts"] == 1, row
    assert "Retry-After" in row["last_error"] and "600" in row["last_error"], row
    called = len(bot.fake.called("chat.postMessage"))
    async with asyncio.timeout(DELIVERY_TIMEOUT / 2):
        await bot.host.tick_now("manual")  # before Slack allows it: not called
    assert len(bot.fake.called("chat.postMessage")) == called
    assert deliveries(bot)[0]["attempts"] == 2
    assert "rate-limited" in deliveries(bot)[0]["last_error"]
    now = time.monotonic()
    bot.platform.client.clock = lambda: now + 601  # ten minutes later
    await bot.host.tick_now("manual")
    assert deliveries(bot)[0]["status"] == "delivered"
    assert posts(bot) == 1
