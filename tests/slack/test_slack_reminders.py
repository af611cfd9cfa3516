"""A reminder asked for in Slack is read in the person's own Slack time zone (users.info's
``tz``), and in ``tick.timezone`` when Slack does not say."""

from __future__ import annotations

from bothost.schedules import list_jobs
from tests.slack.harness import ALICE, GENERAL


async def test_a_reminder_in_slack_uses_the_persons_slack_zone(start_bot):
    bot = await start_bot(tick={"timezone": "UTC"})
    bot.fake.zones[ALICE] = "America/New_York"
    ts = await bot.say("remind at tomorrow 9:00 call Ana")
    text = await bot.wait_reply(GENERAL, ts, "Reminder set for ")
    assert text.endswith("09:00 America/New_York (job 1)."), text
    [job] = await bot.host.store.run(lambda db: list_jobs(db))
    assert (job.owner, job.target, job.tz) == (
        f"slack:{ALICE}",
        f"slack:{GENERAL}:{ts}",
        "America/New_York",
    )
    assert [c.args["user"] for c in bot.fake.called("users.info")] == [ALICE]


async def test_without_a_slack_zone_the_configured_one_is_used(start_bot):
    bot = await start_bot(tick={"timezone": "Europe/Zurich"})
    ts = await bot.say("remind in 10m stand-up")  # users.info answers user_not_found
    text = await bot.wait_reply(GENERAL, ts, "Reminder set for ")
    assert text.endswith(" Europe/Zurich (job 1)."), text
