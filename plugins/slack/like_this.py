"""A briefing item's "Less like this" / "More like this" buttons, and the confirmation after.

A click asks the host for the narrowest triage rule that would have changed the item
(:meth:`~bothost.api.HostApi.propose_triage_rule`) and posts it in the briefing's thread,
with [Apply] and [Cancel]: in the thread rather than privately, so a person who may not
change triage can show an admin what they would like, and the admin can apply it. [Apply]
carries only the proposal's key; the host makes the rule again from the event and stores it
only for an admin (``platforms.slack.admins``). Anyone else who presses it is told, privately,
who can, and nothing is stored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bothost.plugins.slack.blocks import LESS, MORE, VALUE_LIMIT, context, decode_ids, section

if TYPE_CHECKING:
    from bothost.plugins.slack.platform import SlackPlatform

APPLY, CANCEL = "bothost_triage_apply", "bothost_triage_cancel"  # on the proposal
DIRECTION = {LESS: "less", MORE: "more"}


def refusal(admins: set[str]) -> str:
    """What a non-admin who presses [Apply] reads: who can."""
    who = ", ".join(f"<@{a}>" for a in sorted(admins)) or "an admin at the host"
    return f"Only admins can change triage: ask {who}."


def proposal_blocks(text: str, key: str, note: str = "") -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [section(text)]
    if key and len(key) <= VALUE_LIMIT:
        blocks.append(
            {
                "type": "actions",
                "block_id": "triage_proposal",
                "elements": [
                    {
                        "type": "button",
                        "action_id": APPLY,
                        "value": key,
                        "style": "primary",
                        "text": {"type": "plain_text", "text": "Apply"},
                    },
                    {
                        "type": "button",
                        "action_id": CANCEL,
                        "value": key,
                        "text": {"type": "plain_text", "text": "Cancel"},
                    },
                ],
            }
        )
    if note:
        blocks.append(context(note))
    return blocks


class LikeThis:
    def __init__(self, platform: SlackPlatform) -> None:
        self.platform = platform

    def register(self, app: Any) -> None:
        app.action(LESS)(self.on_propose)
        app.action(MORE)(self.on_propose)
        app.action(APPLY)(self.on_apply)
        app.action(CANCEL)(self.on_cancel)

    async def allowed(self, body: dict[str, Any]) -> bool:
        user, channel, message = who_where(body)
        access = self.platform.access
        if access.user_allowed(user):
            return True
        await self.platform.ephemeral(channel, user, access.refusal(user), message.get("ts"))
        return False

    async def on_propose(self, ack: Any, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        if not await self.allowed(body):
            return
        user, channel, message = who_where(body)
        ids = decode_ids(action.get("value") or "")
        found = await self.platform.host.propose_triage_rule(ids, DIRECTION[action["action_id"]])
        access = self.platform.access
        note = "" if access.is_admin(user) or not found.key else refusal(access.admins)
        thread = message.get("thread_ts") or message.get("ts")
        if channel:
            blocks = proposal_blocks(found.text, found.key, note)
            await self.platform.post(channel, thread, found.text, blocks=blocks)

    async def on_apply(self, ack: Any, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        user, channel, message = who_where(body)
        access = self.platform.access
        if not access.is_admin(user):  # DESIGN: an admin's confirmation; others told who can
            await self.platform.ephemeral(
                channel, user, refusal(access.admins), message.get("thread_ts")
            )
            return
        try:
            done = await self.platform.host.apply_triage_rule(
                action.get("value") or "", f"slack:{user}", admin=True
            )
            note = f"{'✓' if done.applied else '✗'} {done.text} (<@{user}>)"
        except ValueError as exc:  # a value that is no proposal's key
            note = f"✗ {exc}"
        await self.settle(channel, message, note)

    async def on_cancel(self, ack: Any, body: dict[str, Any]) -> None:
        await ack()
        if not await self.allowed(body):
            return
        user, channel, message = who_where(body)
        await self.settle(channel, message, f"Cancelled by <@{user}>; nothing changed.")

    async def settle(self, channel: str, message: dict[str, Any], note: str) -> None:
        """The proposal's buttons replaced by what became of it."""
        blocks = [b for b in message.get("blocks") or [] if b.get("type") != "actions"]
        if channel and message.get("ts"):
            await self.platform.update(
                channel, message["ts"], message.get("text") or note, blocks=[*blocks, context(note)]
            )


def who_where(body: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """The clicker, the channel and the message clicked in."""
    return body["user"]["id"], (body.get("channel") or {}).get("id", ""), body.get("message") or {}
