"""Messages from Slack to the agent: which events are for the bot, and translating each.

The bot answers mentions in channels, direct messages, and follow-ups in a thread it is
already part of (no mention needed there, so ``stop`` works as typed). With
``require_mention: false`` it answers every message in its channels. Slack delivers a
mention twice (``app_mention`` and ``message``) and retries deliveries it thinks were lost:
each message carries its own ``(channel, ts)`` as its delivery id, and the host takes it
once (``host.take_delivery``, in the store: a retry may reach another host sharing it, or
this host after a restart) before anything is answered, a refusal included. The reply goes
to the thread the message was in (a new thread under a top-level message); mentioned in the
middle of a thread, the bot first reads what was said there since it last spoke. Stop words
and the order of a thread's messages are the host's (``host.handle_message``; the platform
is :class:`~bothost.platform.Serial`): a top-level ``stop`` in a DM is marked
``stops_channel`` and stops every thread of that DM, each of which is told so.
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from typing import TYPE_CHECKING, Any

from bothost.plugins.slack.streaming import LiveReply

from bothost import api
from bothost.models import Address, IncomingMessage

if TYPE_CHECKING:
    from bothost.plugins.slack.platform import SlackPlatform

logger = logging.getLogger(__name__)

# Slack retries an undelivered event three times: at once, after a minute, after five
# minutes. The store keeps a delivery for an hour: the window with room for slow hosts,
# host clocks that disagree and a retry that waited for a restart.
DELIVERY_KEPT = 3600.0
IGNORED_SUBTYPES = {
    "bot_message",
    "message_changed",
    "message_deleted",
    "channel_join",
    "channel_leave",
    "channel_topic",
    "channel_purpose",
    "channel_name",
    "assistant_app_thread",
    "ekm_access_denied",
    "message_replied",
}
CONTEXT_MESSAGES = 50  # earlier thread messages passed as context
CONTEXT_TEXT_LIMIT = 4000  # characters kept of each earlier message
REPLIES_PAGES = 5  # conversations.replies pages read at most (200 messages each)
DIRECT, AMBIENT = "direct", "ambient"  # how a message reached the bot


class Conversations:
    def __init__(self, platform: SlackPlatform) -> None:
        self.platform = platform
        # a person refused is refused at every message they send: a line a minute each
        self.refusals = api.RateLimitedLog(logger)

    def register(self, app: Any) -> None:
        app.event("app_mention")(self.on_event)
        app.event("message")(self.on_event)

    async def on_event(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        """A bolt listener; returns at once, the message is handled in a task of the platform."""
        how = await self.addressed(event)
        if how is None:
            return
        self.platform.spawn(self.handle(body, event, direct=how == DIRECT))

    async def first_delivery(self, message: IncomingMessage) -> bool:
        """Whether no host sharing the store has taken this message before.

        A store that cannot write does not cost the message: it is answered, and only the
        dedupe is lost while the store is down (logged)."""
        try:
            return await self.platform.host.take_delivery(message, DELIVERY_KEPT)
        except Exception:  # boundary: the message still gets its turn
            logger.exception("slack: could not record message %s in the store", message.delivery)
            return True

    async def addressed(self, event: dict[str, Any]) -> str | None:
        """DIRECT (a mention or DM), AMBIENT (a thread it is in, or any message when no
        mention is required), or None: not for the bot."""
        me = self.platform.identity
        if event.get("bot_id") or event.get("subtype") in IGNORED_SUBTYPES:
            return None
        user = event.get("user") or ""
        if not user or user == me.user_id or "ts" not in event or "channel" not in event:
            return None
        if (
            event.get("type") == "app_mention"
            or is_dm(event)
            or f"<@{me.user_id}>" in (event.get("text") or "")
        ):
            return DIRECT
        if not self.platform.config.require_mention:
            return AMBIENT
        thread = event.get("thread_ts")
        if thread and await self.platform.in_thread(event["channel"], thread):
            return AMBIENT
        return None

    def message(self, body: dict[str, Any], event: dict[str, Any]) -> IncomingMessage:
        """The event as the host reads it."""
        channel, user, ts = event["channel"], event["user"], event["ts"]
        return IncomingMessage(
            address=Address("slack", channel, event.get("thread_ts") or ts),
            text=strip_mention(event.get("text") or "", self.platform.identity.user_id),
            user=user,
            is_admin=self.platform.access.is_admin(user),
            meta={"event_id": body.get("event_id"), "ts": ts, "team": team_of(body, event)},
            # the key stored before the host took deliveries: a retry across an upgrade
            delivery=f"message:{channel}:{ts}",
            stops_channel=is_dm(event) and not event.get("thread_ts"),
        )

    async def handle(self, body: dict[str, Any], event: dict[str, Any], direct: bool) -> None:
        message = self.message(body, event)
        if not await self.first_delivery(message):
            logger.info("slack message %s was taken already", message.delivery)
            return
        channel, user = event["channel"], event["user"]
        thread = event.get("thread_ts") or event["ts"]
        access = self.platform.access
        refusal = None
        if not access.channel_allowed(channel, is_dm(event)):
            refusal = access.channel_refusal(channel)
        elif not access.user_allowed(user):
            self.refusals.info(user, "slack user %s is not in allowed_users; refused", user)
            refusal = access.refusal(user)
        if refusal:
            if direct:  # chatter that was not addressed to the bot gets no answer at all
                await self.platform.refuse(channel, thread, user, refusal)
            return
        if message.text:
            await self.converse(message)

    async def converse(self, message: IncomingMessage) -> None:
        address = message.address
        reply = LiveReply(
            self.platform,
            address.channel,
            address.thread or "",
            message.user,
            message.meta.get("team") or "",
            message.meta["ts"],
        )
        self.platform.remember_requester(str(address), message.user)
        started = False

        async def start(message: IncomingMessage) -> None:
            """Its thread's turn: read the thread (what was said since the bot last spoke,
            after the turn before this one has spoken) and show that it is thinking."""
            nonlocal started
            started = True
            ts, thread = message.meta["ts"], address.thread or ""
            if thread != ts:
                message.context = await self.thread_context(address.channel, thread, ts)
            await reply.begin()

        try:
            answer = await self.platform.host.handle_message(
                message,
                on_text=reply.text,
                on_status=reply.status,
                platform=self.platform,
                on_start=start,
            )
        except asyncio.CancelledError:
            raise
        except Exception:
            ref = uuid.uuid4().hex[:8]
            logger.exception("slack turn in %s failed (ref %s)", address, ref)
            answer = api.Reply(
                f"Something went wrong on my side (ref {ref} in the log).", api.Outcome.FAILED
            )
        try:
            if started or not (answer.cancelled or answer.outcome == api.Outcome.NOTHING_RUNNING):
                await reply.finish(answer)
            else:  # a stop: each thread it stopped is told (nothing stopped: this one)
                for target in answer.cancelled or (address,):
                    await self.platform.send_text(target.channel, target.thread, answer.text)
        except Exception:  # Slack unreachable or refusing: the transcript is kept anyway
            logger.exception("slack: could not post the reply in %s", address)

    async def thread_context(self, channel: str, thread: str, before: str) -> list[dict[str, str]]:
        """What was said in the thread before ``before``, since the bot last spoke."""
        from slack_sdk.errors import SlackApiError  # here: see the note in .platform

        messages: list[dict[str, Any]] = []
        cursor = None
        try:
            for _ in range(REPLIES_PAGES):
                response = await self.platform.client.conversations_replies(
                    channel=channel, ts=thread, limit=200, cursor=cursor
                )
                messages += response.get("messages") or []
                cursor = (response.get("response_metadata") or {}).get("next_cursor")
                if not cursor:
                    break
        except SlackApiError as exc:
            logger.warning(
                "slack: cannot read thread %s in %s (%s); answering without it",
                thread,
                channel,
                exc.response.get("error"),
            )
            return []
        me = self.platform.identity
        earlier = [m for m in messages if float(m.get("ts", 0)) < float(before)]
        for i in range(len(earlier) - 1, -1, -1):
            if earlier[i].get("user") == me.user_id or earlier[i].get("bot_id") == me.bot_id:
                earlier = earlier[i + 1 :]
                break
        return [
            {
                "user": m.get("user") or m.get("username") or m.get("bot_id") or "unknown",
                "text": strip_mention(m.get("text") or "", me.user_id)[:CONTEXT_TEXT_LIMIT],
            }
            for m in earlier[-CONTEXT_MESSAGES:]
        ]


def is_dm(event: dict[str, Any]) -> bool:
    return event.get("channel_type") == "im" or str(event.get("channel", "")).startswith("D")


def team_of(body: dict[str, Any], event: dict[str, Any]) -> str:
    return event.get("team") or body.get("team_id") or ""


def strip_mention(text: str, bot_user: str) -> str:
    if not bot_user:
        return text.strip()
    return re.sub(rf"<@{re.escape(bot_user)}(?:\|[^>]*)?>", "", text).strip()
