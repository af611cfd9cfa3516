"""Fixtures: the fake Slack, and ``start_bot(slack_settings, **sections)`` that writes a
config (offline agent, the test plugin in ``plugins/``), starts a real host with the Slack
platform against the fake, and returns a :class:`~tests.slack.harness.Bot` (``bot_home``: the
home of a second host).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from bothost.config import load
from bothost.hooks.discovery import load_plugins, new_plugin_manager
from bothost.host.host import Host
from tests.slack.fake_slack import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.slack.harness import ADMIN, ALICE, PLUGINS, SECRET, Bot, merge


@pytest.fixture
async def fake():
    server = FakeSlack()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def start_bot(fake, home, tmp_path):
    hosts: list[Host] = []

    async def start(
        slack: dict[str, Any] | None = None,
        with_mcp: bool = False,
        bot_home: Path | None = None,
        **sections: Any,
    ) -> Bot | Host:
        config = {
            "llm": {"provider": "offline"},
            "agent": {"approval": "ask", "approval_timeout": "5s"},
            "platforms": {
                "console": {"enabled": False},
                "web": {"enabled": True, "host": "127.0.0.1", "port": 0},
                "slack": merge(
                    {
                        "enabled": True,
                        "mode": "socket",
                        "bot_token": BOT_TOKEN,
                        "app_token": APP_TOKEN,
                        "signing_secret": SECRET,
                        "api_url": fake.api_url,
                        "allowed_users": [ALICE],
                        "admins": [ADMIN],
                        "require_mention": True,
                    },
                    slack or {},
                ),
            },
            "plugins": {"dirs": [str(PLUGINS)]},
        }
        config = merge(config, sections)
        path = tmp_path / f"bothost-{len(hosts)}.yaml"
        path.write_text(yaml.safe_dump(config))
        loaded = load(path, bot_home or home)
        pm = new_plugin_manager()
        load_plugins(pm, loaded.plugins.dirs, [])
        host = Host(loaded, bot_home or home, pm)
        hosts.append(host)
        await host.start(
            serve_http=config["platforms"]["slack"].get("mode") == "http",
            platforms=True,
            mcp=with_mcp,
            tick=False,
        )
        if "slack" not in host.active:
            return host  # a test of a failed start looks at the host itself
        bot = Bot(host, fake)
        bot.platform.pacer.interval = 0.0  # the pace is tested on its own
        bot.platform.stream_interval = 0.0
        bot.platform.update_interval = 0.0
        bot.platform.status_interval = 0.0
        return bot

    yield start
    for host in hosts:
        await host.stop()
