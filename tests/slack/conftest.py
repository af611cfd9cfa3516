"""A real host with the real bolt app, talking to the fake Slack in ``fake_slack.py``.

``start_bot(**slack_settings)`` writes a config (offline agent, the test plugin in
``plugins/``), starts the host with the Slack platform, and returns a :class:`Bot` whose
``say`` sends a message the way Slack would (an ``app_mention`` or ``message`` event through
Socket Mode) and whose ``thread`` reads what the bot wrote in a thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_slack import APP_TOKEN, BOT_TOKEN, BOT_USER, TEAM, FakeSlack

from bothost.config import load
from bothost.discovery import load_plugins, new_plugin_manager
from bothost.host import Host

PLUGINS = Path(__file__).with_name("plugins")
ALICE, BOB, ADMIN = "UALICE", "UBOB", "UADMIN"
GENERAL = "C0GENERAL"
SECRET = "signing-secret-for-tests"


class Bot:
    def __init__(self, host: Host, fake: FakeSlack) -> None:
        self.host = host
        self.fake = fake
        self.platform = host.active["slack"]

    async def say(self, text: str, user: str = ALICE, channel: str = GENERAL,
                  thread_ts: str | None = None, mention: bool = True,
                  event_id: str | None = None) -> str:
        """Post ``text`` as ``user``; the message's ts."""
        dm = channel.startswith("D")
        if mention and not dm:
            text = f"<@{BOT_USER}> {text}"
        ts = self.fake.add_message(channel, user, text, thread_ts)
        event = {"type": "app_mention" if mention and not dm else "message", "user": user,
                 "text": text, "ts": ts, "channel": channel, "event_ts": ts, "team": TEAM}
        if thread_ts:
            event["thread_ts"] = thread_ts
        if dm:
            event["channel_type"] = "im"
        await self.fake.event(event, event_id)
        return ts

    def thread(self, channel: str, thread_ts: str) -> str:
        """Everything the bot has written in a thread so far."""
        return "\n".join(m.get("text", "") for m in self.fake.messages.get(channel, [])
                         if m.get("user") == BOT_USER and m.get("thread_ts") == thread_ts)

    async def wait_reply(self, channel: str, thread_ts: str, contains: str) -> str:
        await self.fake.wait_for(lambda: contains in self.thread(channel, thread_ts))
        return self.thread(channel, thread_ts)


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        out[key] = merge(out[key], value) if isinstance(value, dict) and isinstance(
            out.get(key), dict) else value
    return out


@pytest.fixture
async def fake():
    server = FakeSlack()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def start_bot(fake, home, tmp_path):
    hosts: list[Host] = []

    async def start(slack: dict[str, Any] | None = None, **sections: Any) -> Bot:
        config = {
            "llm": {"provider": "offline"},
            "agent": {"approval": "ask", "approval_timeout": "5s"},
            "platforms": {
                "console": {"enabled": False},
                "web": {"enabled": True, "host": "127.0.0.1", "port": 0},
                "slack": merge({
                    "enabled": True, "mode": "socket", "bot_token": BOT_TOKEN,
                    "app_token": APP_TOKEN, "signing_secret": SECRET, "api_url": fake.api_url,
                    "allowed_users": [ALICE], "admins": [ADMIN], "require_mention": True,
                }, slack or {}),
            },
            "plugins": {"dirs": [str(PLUGINS)]},
        }
        config = merge(config, sections)
        path = tmp_path / f"bothost-{len(hosts)}.yaml"
        path.write_text(yaml.safe_dump(config))
        loaded = load(path, home)
        pm = new_plugin_manager()
        load_plugins(pm, loaded.plugins.dirs, [])
        host = Host(loaded, home, pm)
        hosts.append(host)
        await host.start(serve_http=config["platforms"]["slack"].get("mode") == "http",
                         platforms=True, mcp=False, tick=False)
        assert "slack" in host.active, "the Slack platform did not start"
        bot = Bot(host, fake)
        bot.platform.pacer.interval = 0.0  # the pace is tested on its own
        bot.platform.stream_interval = 0.0
        bot.platform.update_interval = 0.0
        return bot

    yield start
    for host in hosts:
        await host.stop()
