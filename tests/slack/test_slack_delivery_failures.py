"""Briefings to Slack when Slack fails: each failure is recorded, retried, then reported.

Through a real host and the Slack platform against the fake Web API: a 429 with a short
``Retry-After`` is waited out and posted once; a 500 and ``channel_not_found`` are failed
attempts with Slack's error recorded, retried at the next tick and, after
``tick.max_attempts``, reported as failed — never dropped, and never holding up the
briefing's other target.
"""

from __future__ import annotations

from bothost.events import feedback

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
