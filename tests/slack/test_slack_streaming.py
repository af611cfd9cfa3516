"""Live feedback: status first, then the reply streamed, or edited in place as a fallback."""

from __future__ import annotations

import json

from bothost.plugins.slack.streaming import LiveReply

from tests.slack.harness import GENERAL

STREAM_METHODS = (
    "assistant.threads.setStatus",
    "chat.startStream",
    "chat.appendStream",
    "chat.stopStream",
    "chat.postMessage",
    "chat.update",
)


def sequence(fake) -> list[str]:
    return [c.method for c in fake.calls if c.method in STREAM_METHODS]


async def test_status_then_stream_in_order(start_bot):
    bot = await start_bot(llm={"provider": "chunky"})
    ts = await bot.say("count for me")
    await bot.fake.wait_call("chat.stopStream")
    assert sequence(bot.fake) == [
        "assistant.threads.setStatus",
        "chat.startStream",
        "chat.appendStream",
        "chat.appendStream",
        "chat.appendStream",
        "chat.stopStream",
    ]
    status = bot.fake.called("assistant.threads.setStatus")[0].args
    assert status["thread_ts"] == ts and status["status"]
    assert bot.thread(GENERAL, ts) == "one two three four"


async def test_without_streaming_the_reply_is_posted_and_edited(start_bot):
    bot = await start_bot(llm={"provider": "chunky"})
    bot.fake.fail("assistant.threads.setStatus", error="missing_scope")
    bot.fake.fail("chat.startStream", error="unknown_method")
    ts = await bot.say("count for me")
    await bot.wait_reply(GENERAL, ts, "one two three four")
    methods = sequence(bot.fake)
    assert methods[:3] == ["assistant.threads.setStatus", "chat.startStream", "chat.postMessage"]
    assert methods.count("chat.postMessage") == 1 and "chat.update" in methods
    assert bot.fake.called("reactions.add")  # the status stand-in
    await bot.fake.wait_call("reactions.remove")
    # the platform remembers: the next reply goes straight to messages
    again = await bot.say("count again")
    await bot.wait_reply(GENERAL, again, "one two three four")
    assert len(bot.fake.called("chat.startStream")) == 1
    assert len(bot.fake.called("assistant.threads.setStatus")) == 1


async def test_model_text_cannot_ping_the_channel(start_bot):
    bot = await start_bot()

    async def shout(request):
        from bothost.llm.base import ChatResponse

        text = "<!channel> look at <https://evil.example|your bank> now"
        await request.on_text(text)
        return ChatResponse(text=text)

    bot.host.llm.complete = shout
    ts = await bot.say("hi")
    await bot.fake.wait_call("chat.stopStream")
    text = bot.thread(GENERAL, ts)
    assert "<!channel>" not in text and "|" not in text
    assert "your bank (https://evil.example)" in text


async def test_a_real_model_streams_and_sees_the_thread(start_bot):
    from tests.fakes.llm import FakeLlm

    llm = await FakeLlm(
        [
            {
                "text": "The disk filled up because of old **backups**; "
                "remove them and retry the deploy."
            }
        ]
    ).start()
    try:
        bot = await start_bot(llm=llm.openai_config("gpt-test"))
        root = bot.fake.add_message(GENERAL, "UBOB", "deploy of api-2 failed")
        bot.fake.add_message(GENERAL, "UBOB", "logs say: disk full", thread_ts=root)
        await bot.say("why did it fail?", thread_ts=root)
        await bot.fake.wait_call("chat.stopStream")
        methods = sequence(bot.fake)
        assert methods[:2] == ["assistant.threads.setStatus", "chat.startStream"]
        assert methods.count("chat.appendStream") >= 2 and methods[-1] == "chat.stopStream"
        assert bot.thread(GENERAL, root).startswith("The disk filled up because of old **backups**")
        assert "disk full" in json.dumps(llm.requests[0]["messages"])
    finally:
        await llm.stop()


async def test_tool_progress_shows_as_the_thread_status(start_bot):
    bot = await start_bot()
    ts = await bot.say("call copy_files {}")
    await bot.wait_reply(GENERAL, ts, "copied 3 files")
    statuses = [c.args["status"] for c in bot.fake.called("assistant.threads.setStatus")]
    assert statuses == [
        "is thinking…",
        "Running copy_files…",  # the tool's name as it starts, then its own progress
        "copying 1/3",
        "copying 2/3",
        "copying 3/3",
    ]


async def test_a_burst_of_status_lines_keeps_the_latest(start_bot):
    bot = await start_bot()
    bot.platform.status_interval = 0.2
    reply = LiveReply(bot.platform, GENERAL, "1.0", "UALICE", "T0TEAM", "1.0")
    for text in ("is thinking…", "copying 1/3", "copying 2/3", "copying 3/3"):
        await reply.status(text)
    await bot.fake.wait_call("assistant.threads.setStatus", count=2)
    statuses = [c.args["status"] for c in bot.fake.called("assistant.threads.setStatus")]
    assert statuses == ["is thinking…", "copying 3/3"]


async def test_a_compacted_thread_says_so_once_in_the_reply(start_bot):
    from bothost.agent.compaction import SUMMARISED

    bot = await start_bot(llm={"provider": "offline", "context_tokens": 2100, "max_tokens": 100})
    root = await bot.say("help")
    await bot.fake.wait_call("chat.stopStream")
    for n in range(2, 14):  # the offline agent's help is long: a dozen fill the context
        await bot.say("help", thread_ts=root, mention=False)
        await bot.fake.wait_call("chat.stopStream", count=n)
        if SUMMARISED in bot.thread(GENERAL, root):
            break
    said = bot.thread(GENERAL, root)
    assert said.count(SUMMARISED) == 1 and said.rstrip().endswith(SUMMARISED)
