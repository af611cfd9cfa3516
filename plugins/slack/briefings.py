"""Briefings posted to Slack, and what their Acknowledge / Snooze / Mute buttons do (the
"Less/More like this" buttons are :mod:`bothost.plugins.slack.like_this`'s).

A button's value holds the event ids of its item; the click calls the host's feedback
functions (each idempotent, so a double click or a redelivered action changes nothing
more) and replaces the item's buttons with who did what. Mute turns the clicked events into
mute rules: per source and type, narrowed by the payload fields (sender, host, calendar…)
that all of them share, so muting one newsletter does not silence all mail.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from bothost.plugins.slack.blocks import ACK, MUTE, SNOOZE, context, decode_ids, render
from bothost.plugins.slack.like_this import LikeThis

from bothost.models import Address, Briefing
from bothost.queries import Queries

if TYPE_CHECKING:
    from bothost.plugins.slack.platform import SlackPlatform

logger = logging.getLogger(__name__)

SNOOZE_FOR = 4 * 3600.0  # seconds; matches the button's "Snooze 4h" label
MUTE_FIELDS = (
    "from",
    "sender",
    "host",
    "alias",
    "service",
    "unit",
    "calendar_id",
    "calendar",
    "location",
    "label",
    "list_id",
)  # payload fields that narrow a mute


class Briefings:
    def __init__(self, platform: SlackPlatform) -> None:
        self.platform = platform
        self.like_this = LikeThis(platform)

    def register(self, app: Any) -> None:
        for action_id in (ACK, SNOOZE, MUTE):
            app.action(action_id)(self.on_click)
        self.like_this.register(app)

    async def send(self, address: Address, briefing: Briefing) -> str:
        """Post the briefing; Slack errors propagate so the delivery is retried."""
        blocks, text = render(briefing)
        return await self.platform.post(address.channel, address.thread, text, blocks=blocks)

    async def on_click(self, ack: Any, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        user = body["user"]["id"]
        channel = (body.get("channel") or {}).get("id", "")
        message = body.get("message") or {}
        if not self.platform.access.user_allowed(user):
            await self.platform.ephemeral(
                channel, user, self.platform.access.refusal(user), message.get("thread_ts")
            )
            return
        ids = decode_ids(action.get("value") or "")
        queries = self.platform.host.queries
        if action["action_id"] == ACK:
            await queries.acknowledge(ids)
            note = f"✓ Acknowledged by <@{user}>"
        elif action["action_id"] == SNOOZE:
            await queries.snooze(ids, time.time() + SNOOZE_FOR)
            note = f"💤 Snoozed for {SNOOZE_FOR / 3600:g} h by <@{user}>"
        else:
            count = await mute_events(queries, ids, user)
            note = f"🔇 Muted by <@{user}> ({count} rule{'s' if count != 1 else ''})"
        blocks = [
            context(note) if b.get("block_id") == action.get("block_id") else b
            for b in message.get("blocks") or []
        ]
        if channel and message.get("ts") and blocks:
            await self.platform.update(
                channel, message["ts"], message.get("text") or note, blocks=blocks
            )


async def mute_events(queries: Queries, ids: list[int], user: str) -> int:
    """A mute per (source, type) of the events, narrowed by their shared payload fields."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for event in await queries.events(ids):
        groups.setdefault((event.source, event.type), []).append(event.payload)
    for (source, type_), payloads in groups.items():
        match = shared_fields(payloads)
        await queries.mute(source, type_, match, created_by=f"slack:{user}")
    return len(groups)


def shared_fields(payloads: list[dict[str, Any]]) -> dict[str, str]:
    shared = {}
    for name in MUTE_FIELDS:
        values = {str(p.get(name)) for p in payloads if isinstance(p, dict)}
        if len(values) == 1 and all(
            isinstance(p, dict) and p.get(name) not in (None, "") for p in payloads
        ):
            shared[f"payload.{name}"] = literal_glob(values.pop())
    return shared


def literal_glob(text: str) -> str:
    """``text`` as an fnmatch pattern that matches only itself (mute values are globs)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)
