"""Socket Mode connection: reconnecting when Slack drops or refreshes the WebSocket."""

from __future__ import annotations

import logging

from tests.slack.harness import GENERAL


async def test_reconnects_after_the_socket_drops(start_bot):
    bot = await start_bot()
    await bot.fake.wait_for(lambda: bot.fake.sockets)
    await bot.fake.sockets[0].close()
    await bot.fake.wait_call("apps.connections.open", count=2)
    await bot.fake.wait_for(lambda: any(not s.closed for s in bot.fake.sockets))
    ts = await bot.say("help")
    await bot.wait_reply(GENERAL, ts, "offline agent")


async def test_reconnects_when_slack_asks_for_a_refresh(start_bot):
    bot = await start_bot()
    old = await bot.fake.wait_for(lambda: bot.fake.sockets and bot.fake.sockets[0])
    await old.send_json({"type": "disconnect", "reason": "refresh_requested"})
    await bot.fake.wait_call("apps.connections.open", count=2)
    await bot.fake.wait_for(lambda: any(s is not old and not s.closed for s in bot.fake.sockets))
    ts = await bot.say("help")
    await bot.wait_reply(GENERAL, ts, "offline agent")


async def test_bad_app_token_fails_start_with_one_line(start_bot):
    from bothost.plugins.slack.app import SlackStartError, build_client, open_socket_url

    bot = await start_bot()
    try:
        await open_socket_url(build_client(bot.platform.config), "xapp-wrong")
    except SlackStartError as exc:
        assert "app_token" in str(exc) and "invalid_auth" in str(exc)
    else:
        raise AssertionError("a wrong app token was accepted")


async def test_tokens_exported_as_the_guide_says_start_without_a_warning(
    start_bot, monkeypatch, caplog
):
    """docs/slack.md has people export SLACK_BOT_TOKEN; bolt reads it too, and warned on
    every start that the token 'will be unused' (our client already holds it)."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-from-the-environment")
    bot = await start_bot()
    ts = await bot.say("help")
    await bot.wait_reply(GENERAL, ts, "offline agent")
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == []
