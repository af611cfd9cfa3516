"""The Slack test harness: a bot (host + real bolt app) and how to talk to it like Slack does.

:class:`Bot` ``say`` sends a message the way Slack would (an ``app_mention`` or ``message``
event through Socket Mode); ``thread`` reads what the bot wrote in a thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bothost.host.host import Host
from tests.slack.fake_slack import BOT_USER, TEAM, FakeSlack

PLUGINS = Path(__file__).with_name("plugins")
ALICE, BOB, ADMIN = "UALICE", "UBOB", "UADMIN"
GENERAL = "C0GENERAL"
SECRET = "signing-secret-for-tests"


class Bot:
    def __init__(self, host: Host, fake: FakeSlack) -> None:
        self.host = host
        self.fake = fake
        self.platform = host.active["slack"]

    async def say(
        self,
        text: str,
        user: str = ALICE,
        channel: str = GENERAL,
        thread_ts: str | None = None,
        mention: bool = True,
        event_id: str | None = None,
    ) -> str:
        """Post ``text`` as ``user``; the message's ts."""
        dm = channel.startswith("D")
        if mention and not dm:
            text = f"<@{BOT_USER}> {text}"
        ts = self.fake.add_message(channel, user, text, thread_ts)
        event = {
            "type": "app_mention" if mention and not dm else "message",
            "user": user,
            "text": text,
            "ts": ts,
            "channel": channel,
            "event_ts": ts,
            "team": TEAM,
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        if dm:
            event["channel_type"] = "im"
        await self.fake.event(event, event_id)
        return ts

    def thread(self, channel: str, thread_ts: str) -> str:
        """Everything the bot has written in a thread so far."""
        return "\n".join(
            m.get("text", "")
            for m in self.fake.messages.get(channel, [])
            if m.get("user") == BOT_USER and m.get("thread_ts") == thread_ts
        )

    async def wait_reply(self, channel: str, thread_ts: str, contains: str) -> str:
        await self.fake.wait_for(lambda: contains in self.thread(channel, thread_ts))
        return self.thread(channel, thread_ts)


def mention(
    ts: str, text: str = "help", user: str = ALICE, channel: str = GENERAL
) -> dict[str, Any]:
    """The ``app_mention`` event Slack sends for ``@bot text`` posted at ``ts`` (its retry
    sends the same event under the same event id)."""
    return {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT_USER}> {text}",
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
    }


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        out[key] = (
            merge(out[key], value)
            if isinstance(value, dict) and isinstance(out.get(key), dict)
            else value
        )
    return out
