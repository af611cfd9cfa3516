"""Stopping turns in Slack: a top-level `stop` in a DM stops every thread of that DM."""

from __future__ import annotations

import asyncio

from tests.helpers import until
from tests.slack.harness import GENERAL


class StuckModel:
    """A model that never answers, so each turn runs until it is stopped."""

    def __init__(self) -> None:
        self.started = 0

    async def complete(self, request):
        self.started += 1
        await asyncio.Event().wait()


async def test_a_top_level_stop_in_a_dm_stops_every_thread_of_it(start_bot):
    bot = await start_bot()
    model = StuckModel()
    bot.host.llm.complete = model.complete
    first = await bot.say("summarise my inbox", channel="D0ALICE", mention=False)
    second = await bot.say("and my calendar", channel="D0ALICE", mention=False)
    elsewhere = await bot.say("watch the deploy")  # a thread in a channel: not the DM's
    await until(lambda: model.started == 3)
    await bot.say("stop", channel="D0ALICE", mention=False)
    for thread in (first, second):
        text = await bot.wait_reply("D0ALICE", thread, "Stopped.")
        assert text.count("Stopped.") == 1
    assert "Stopped." not in bot.thread(GENERAL, elsewhere)
    await bot.say("stop", thread_ts=elsewhere, mention=False)
    await bot.wait_reply(GENERAL, elsewhere, "Stopped.")


async def test_stop_in_a_thread_with_nothing_running_says_so(start_bot):
    bot = await start_bot()
    root = await bot.say("help")
    await bot.wait_reply(GENERAL, root, "offline agent")
    await bot.say("stop", thread_ts=root, mention=False)
    await bot.wait_reply(GENERAL, root, "Nothing is running.")
