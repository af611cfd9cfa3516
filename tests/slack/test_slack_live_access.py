"""An edit of Slack's access lists (``allowed_users``, ``allowed_channels``, ``admins``)
reaches the running Slack platform without a restart; any other Slack key still waits for
one."""

from __future__ import annotations

from pathlib import Path

import yaml

from bothost.events.triage_rules import who_can
from bothost.host.reload import reload
from tests.slack.harness import ALICE, BOB, GENERAL


def edit(host, **slack: object) -> None:
    """Change keys of ``platforms.slack`` in the file the host was started from."""
    path = Path(host.config_file)
    data = yaml.safe_load(path.read_text())
    data["platforms"]["slack"].update(slack)
    path.write_text(yaml.safe_dump(data))


def started_from(bot, tmp_path) -> None:
    bot.host.config_file = str(tmp_path / "bothost-0.yaml")  # start_bot's file


async def test_a_user_added_to_allowed_users_is_answered_without_a_restart(start_bot, tmp_path):
    bot = await start_bot()
    started_from(bot, tmp_path)
    await bot.say("help", user=BOB)
    refused = await bot.fake.wait_call("chat.postEphemeral")
    assert BOB in refused.args["text"]

    edit(bot.host, allowed_users=[ALICE, BOB], admins=["UADMIN", BOB])
    status = await reload(bot.host)
    assert status.error == "" and status.restart_needed == []
    assert status.applied == ["platforms.slack"]
    ts = await bot.say("help", user=BOB)
    await bot.wait_reply(GENERAL, ts, "offline agent")
    assert bot.platform.access.is_admin(BOB)
    assert "slack:UBOB" in who_can(bot.host.config)  # core reads the running section


async def test_allowed_channels_apply_live_and_other_keys_wait_for_a_restart(start_bot, tmp_path):
    bot = await start_bot()
    started_from(bot, tmp_path)
    edit(bot.host, allowed_channels=[GENERAL], require_mention=False)
    status = await reload(bot.host)
    assert status.restart_needed == ["platforms.slack.require_mention"]
    await bot.say("help", channel="C0RANDOM")
    call = await bot.fake.wait_call("chat.postEphemeral")
    assert "C0RANDOM" in call.args["text"]
    assert bot.host.config.platforms.slack.require_mention is True  # as it started

    edit(bot.host, allowed_channels=[], require_mention=True)  # back: nothing waits
    status = await reload(bot.host)
    assert status.restart_needed == [] and status.applied == ["platforms.slack"]
    ts = await bot.say("help", channel="C0RANDOM")
    await bot.wait_reply("C0RANDOM", ts, "offline agent")
