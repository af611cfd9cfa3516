"""The Slack platform: lifecycle, posting, and the parts that answer Slack's events.

``start`` checks the tokens (``auth.test``; in Socket Mode also ``apps.connections.open``),
builds the bolt app on a shared Web API client and connects Socket Mode, whose client
reconnects by itself when the WebSocket drops; in HTTP mode the host's ``/slack/events``
route feeds the same bolt app. The work is split by subject: :mod:`.events` (conversations),
:mod:`.streaming` (one live reply), :mod:`.briefings`, :mod:`.approvals` and
:mod:`.elicitation` (questions), :mod:`.pacing` (the per-channel posting pace).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from bothost.plugins.slack.access import Access
from bothost.plugins.slack.approvals import Approvals
from bothost.plugins.slack.blocks import context, section
from bothost.plugins.slack.briefings import Briefings
from bothost.plugins.slack.config import SlackConfig
from bothost.plugins.slack.elicitation import Forms
from bothost.plugins.slack.events import Conversations
from bothost.plugins.slack.mrkdwn import split, to_mrkdwn
from bothost.plugins.slack.notices import LoginNotices
from bothost.plugins.slack.pacing import Pacer
from bothost.plugins.slack.streaming import STATUS_INTERVAL, STREAM_INTERVAL

from bothost.api import HostApi
from bothost.models import Address, Briefing
from bothost.platform import LoginNotice, Question

if TYPE_CHECKING:
    from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler

# slack_bolt, slack_sdk and aiohttp are imported where they are used, not above: every
# command registers this platform, and their import was two fifths of `bothost chat`'s start
# (issue 19) although only a running or delivering Slack platform needs them.

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT = 30.0  # seconds to open the Socket Mode WebSocket at start
UPDATE_INTERVAL = 1.0  # seconds between chat.update edits of a reply that streams without streams
REQUESTERS_KEPT = 5000  # conversations whose latest asker is remembered
ZONE_TIMEOUT = 5.0  # seconds users.info may take before a person's zone is the default
SETTLE_TIMEOUT = 2.0  # seconds to edit a question while its turn is being stopped
STOP_TIMEOUT = 3.0  # seconds running turns get to wind down at stop
# Errors that mean a feature will never work for this app, so later replies skip it.
PERMANENT_ERRORS = {
    "unknown_method",
    "missing_scope",
    "not_allowed_token_type",
    "feature_not_enabled",
    "method_deprecated",
    "not_allowed",
}


class SlackPlatform:
    name = "slack"
    serial = True  # one turn per thread at a time: the host queues the rest (Serial)
    host: HostApi  # set by start() or bind(); nothing that uses it runs before
    access: Access  # set by start(); only the parts answering Slack's events use it
    config: SlackConfig  # set by start() or bind()

    def __init__(self) -> None:
        self.client: Any = None
        self.bolt: Any = None
        self.socket: AsyncSocketModeHandler | None = None
        self.identity: Any = None
        self.pacer = Pacer()
        self.features: dict[str, bool] = {}
        self.stream_interval = STREAM_INTERVAL
        self.status_interval = STATUS_INTERVAL
        self.update_interval = UPDATE_INTERVAL
        self.tasks: set[asyncio.Task[Any]] = set()
        self.requesters: OrderedDict[str, str] = OrderedDict()  # address → latest asker
        self.zones: dict[str, str | None] = {}  # user → their Slack tz (timezone())
        self.conversations = Conversations(self)
        self.approvals = Approvals(self)
        self.forms = Forms(self)
        self.briefings = Briefings(self)
        self.notices = LoginNotices(self)

    def enabled(self, host: HostApi) -> bool:
        return bool(host.config.platforms.slack.enabled)

    async def start(self, host: HostApi) -> None:
        from bothost.plugins.slack.app import (
            SlackStartError,
            build_app,
            build_client,
            identify,
            missing_settings,
        )

        self.host = host
        self.config = host.config.platforms.slack
        missing = missing_settings(self.config)
        if missing:
            raise SlackStartError(
                f"{', '.join(missing)} not set (mode {self.config.mode}); see `bothost docs slack`"
            )
        self.access = Access(self.config)
        host.take_config_live("platforms.slack", Access.KEYS, self.reconfigure)
        self.client = build_client(self.config)
        self.identity = await identify(self.client)
        self.bolt = build_app(self.config, self.client)
        for part in (
            self.conversations,
            self.approvals,
            self.forms,
            self.briefings,
            self.notices,
        ):
            part.register(self.bolt)
        if self.config.mode == "socket":
            await self.connect_socket()
        logger.info(
            "slack: connected as %s (%s) in %s mode",
            self.identity.name,
            self.identity.user_id,
            self.config.mode,
        )

    def reconfigure(self, config: SlackConfig) -> None:
        """An edit of the access lists, from the next Slack event on (the rest of the
        section is as it started: the host applies only :data:`Access.KEYS` live)."""
        self.config, self.access = config, Access(config)
        logger.info("slack: access lists applied")

    def bind(self, host: HostApi) -> None:
        """Deliver briefings without being started (``bothost tick``): a Web API client only.

        Posting needs nothing but the bot token — no Socket Mode connection, no bolt app —
        so a tick in another process can reach ``slack:`` targets; ``start`` replaces the
        client when the platform runs for real.
        """
        config = host.config.platforms.slack
        if self.client is not None or not config.enabled or not config.bot_token:
            return
        from bothost.plugins.slack.app import build_client

        self.host, self.config = host, config
        self.client = build_client(config)

    async def connect_socket(self) -> None:
        from bothost.plugins.slack.app import SlackStartError, open_socket_url, sdk_logger
        from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler

        token = self.config.app_token
        if not token:  # missing_settings refused this at start; here for the type checker
            raise SlackStartError("platforms.slack.app_token: not set (mode socket)")
        url = await open_socket_url(self.client, token)
        self.socket = AsyncSocketModeHandler(
            self.bolt, token, logger=sdk_logger, web_client=self.client
        )
        self.socket.client.wss_uri = url  # checked above; the client reuses it once
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT):
                await self.socket.connect_async()
        except TimeoutError as exc:
            await self.socket.close_async()
            raise SlackStartError(
                f"platforms.slack: Socket Mode did not connect within {CONNECT_TIMEOUT:g} s"
            ) from exc

    async def stop(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=STOP_TIMEOUT)
        if self.socket is not None:
            await self.socket.close_async()
            self.socket = None

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.finished)

    def finished(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("slack: a message handler failed", exc_info=task.exception())

    def remember_requester(self, address: str, user: str) -> None:
        """Who started the latest turn at ``address``: they may answer its questions."""
        self.requesters[address] = user
        self.requesters.move_to_end(address)
        while len(self.requesters) > REQUESTERS_KEPT:
            self.requesters.popitem(last=False)

    async def timezone(self, user: str) -> str | None:
        """``user``'s zone from ``users.info`` (their Slack profile's ``tz``), asked once
        per user while the platform runs; None when Slack does not say."""
        if user in self.zones:
            return self.zones[user]
        if self.client is None:
            return None
        from slack_sdk.errors import SlackApiError

        try:
            async with asyncio.timeout(ZONE_TIMEOUT):
                answer = await self.client.users_info(user=user)
        except (SlackApiError, TimeoutError) as exc:
            logger.warning("slack: users.info for %s failed: %s", user, exc)
            return None
        zone = (answer.get("user") or {}).get("tz") or None
        self.zones[user] = zone
        return zone

    def learn(self, feature: str, error: str) -> None:
        """Remember a feature Slack refused for good (``error`` is Slack's error code)."""
        if error in PERMANENT_ERRORS and self.features.get(feature, True):
            logger.info("slack: %s is not available (%s); using the fallback", feature, error)
            self.features[feature] = False

    async def in_thread(self, channel: str, thread: str) -> bool:
        """Whether the bot already talks in this thread (it has a session there)."""
        return await self.host.queries.session(Address("slack", channel, thread)) is not None

    # --- posting -----------------------------------------------------------------------------

    async def post(
        self,
        channel: str,
        thread: str | None,
        text: str,
        blocks: list[dict[str, Any]] | None = None,
    ) -> str:
        await self.pacer.wait(channel)
        response = await self.client.chat_postMessage(
            channel=channel,
            thread_ts=thread,
            text=text,
            blocks=blocks,
            unfurl_links=False,
            unfurl_media=False,
        )
        return str(response["ts"])

    async def update(
        self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]] | None = None
    ) -> None:
        await self.client.chat_update(channel=channel, ts=ts, text=text, blocks=blocks)

    async def settle(self, channel: str, ts: str, text: str, note: str) -> None:
        """Replace a question's buttons with ``note``; best effort (used while cancelling)."""
        import aiohttp
        from slack_sdk.errors import SlackApiError

        try:
            async with asyncio.timeout(SETTLE_TIMEOUT):
                await self.update(channel, ts, note, blocks=[section(text), context(note)])
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
            logger.info("slack: could not update question %s: %s", ts, exc)

    async def ephemeral(
        self, channel: str, user: str, text: str, thread: str | None = None
    ) -> None:
        from slack_sdk.errors import SlackApiError

        try:
            await self.client.chat_postEphemeral(
                channel=channel, user=user, text=text, thread_ts=thread
            )
        except SlackApiError as exc:
            logger.info("slack: ephemeral to %s failed: %s", user, exc.response.get("error"))

    async def send_text(self, channel: str, thread: str | None, text: str) -> str:
        """Post model or host text (Markdown) as mrkdwn, split across messages if long."""
        ts = ""
        for chunk in split(to_mrkdwn(text)):
            ts = await self.post(channel, thread, chunk)
        return ts

    async def refuse(self, channel: str, thread: str, user: str, line: str) -> None:
        """One line for someone the bot will not serve: private in channels."""
        if channel.startswith("D"):
            await self.post(channel, thread, line)
        else:
            await self.ephemeral(channel, user, line, thread)

    # --- the Platform protocol ---------------------------------------------------------------

    async def send(self, address: Address, text: str, **kwargs: Any) -> str:
        return await self.send_text(address.channel, address.thread, text)

    async def send_briefing(self, address: Address, briefing: Briefing) -> str:
        if self.client is None:
            from bothost.plugins.slack.app import SlackStartError

            raise SlackStartError("the Slack platform is not running")
        return await self.briefings.send(address, briefing)

    async def notify_login_needed(self, notice: LoginNotice) -> None:
        if self.client is None:
            return  # bound only (a tick in another process): the running host tells them
        await self.notices.notify(notice)

    async def ask(self, address: Address, question: Question) -> Any:
        if self.client is None or not address.channel:
            return None
        requester = question.user or self.requesters.get(str(address), "")
        if question.kind == "approval":
            return await self.approvals.ask(address, question, requester)
        return await self.forms.ask(address, question, requester)
