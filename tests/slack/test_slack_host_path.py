"""Slack's stop words, a thread's order and Slack's redeliveries are the host's to handle.

The platform only translates events (tests/test_thin_platforms.py keeps it so); here the
host is seen doing each: its ``stop_turns`` is what a ``stop`` reaches, its inbox queues a
thread's second message behind the first and refuses Slack's retry of a delivery.
"""

from __future__ import annotations

import asyncio

from tests.helpers import until
from tests.slack.harness import GENERAL, mention


def count_stops(host, monkeypatch) -> list:
    """The addresses the host's ``stop_turns`` was asked to stop, as they come."""
    asked = []
    real = host.stop_turns

    async def stop_turns(address, within=False):
        asked.append((str(address), within))
        return await real(address, within)

    monkeypatch.setattr(host, "stop_turns", stop_turns)
    return asked


async def test_a_stop_in_a_thread_is_the_hosts_and_the_thread_is_told(start_bot, monkeypatch):
    bot = await start_bot()
    asked = count_stops(bot.host, monkeypatch)
    started = asyncio.Event()

    async def stuck(request):
        started.set()
        await asyncio.Event().wait()

    bot.host.llm.complete = stuck
    root = await bot.say("do something slow")
    async with asyncio.timeout(5):
        await started.wait()
    await bot.say("stop", thread_ts=root, mention=False)
    await bot.wait_reply(GENERAL, root, "Stopped.")
    assert asked == [(f"slack:{GENERAL}:{root}", False)]


async def test_a_top_level_stop_in_a_dm_asks_the_host_for_the_whole_dm(start_bot, monkeypatch):
    bot = await start_bot()
    asked = count_stops(bot.host, monkeypatch)
    ts = await bot.say("stop", channel="D0ALICE", mention=False)
    await bot.wait_reply("D0ALICE", ts, "Nothing is running.")
    assert asked == [(f"slack:D0ALICE:{ts}", True)]


async def test_a_threads_second_message_waits_in_the_hosts_queue(start_bot):
    bot = await start_bot()
    release = asyncio.Event()
    calls = []

    async def held(request):
        calls.append(request)
        await release.wait()
        raise RuntimeError("the first turn ends here")

    bot.host.llm.complete = held
    root = await bot.say("first")
    await until(lambda: len(calls) == 1)
    await bot.say("and then?", thread_ts=root, mention=False)
    key = f"slack:{GENERAL}:{root}"
    await until(lambda: bot.host.inbox.waiting.get(key) == 2)
    assert len(calls) == 1  # the second is queued behind the first turn, not running beside it
    release.set()
    await until(lambda: len(calls) == 2 and key not in bot.host.inbox.waiting)


async def test_slacks_retry_of_a_delivery_is_refused_by_the_host(start_bot):
    bot = await start_bot()
    ts = await bot.say("help", event_id="Ev0RETRIED")
    await bot.wait_reply(GENERAL, ts, "offline agent")
    event = mention(ts)
    await bot.fake.event(event, "Ev0RETRIED")
    await until(lambda: bot.host.inbox.refused == 1)
    await bot.say("help", channel="C0OTHER")  # something the bot surely answers after
    await bot.wait_reply("C0OTHER", bot.fake.messages["C0OTHER"][0]["ts"], "offline agent")
    assert len([c for c in bot.fake.called("chat.startStream") if c.args["thread_ts"] == ts]) == 1
