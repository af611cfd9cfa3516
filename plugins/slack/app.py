"""The Slack connection: the Web API client, the bolt ``AsyncApp``, and the token checks.

One :class:`AsyncWebClient` per platform, pointed at ``platforms.slack.api_url`` (tests and
GovSlack use another base URL) and retrying 429 answers after a short ``Retry-After``
(a long one fails the call and is honoured by later calls: :mod:`.ratelimit`). The
bolt app shares that client, so its own calls (``auth.test``, Socket Mode's
``apps.connections.open``) go to the same place. Tokens are checked before anything
connects, so a bad one is one clear line at start and in ``bothost doctor``. Slack's
libraries log whole payloads at DEBUG — modal answers included — so they get a logger that
never emits DEBUG records.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from bothost.plugins.slack.config import SlackConfig
from bothost.plugins.slack.ratelimit import RateLimitedClient, ShortRetryHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

RATE_LIMIT_RETRIES = 3  # 429s retried per call before the error reaches the caller
API_TIMEOUT = 30  # seconds for one Web API call
CHECK_TIMEOUT = 15.0  # seconds for doctor's token checks

sdk_logger = logging.getLogger("bothost.plugins.slack.sdk")
sdk_logger.setLevel(logging.INFO)  # DEBUG records would carry payloads, secrets included

# bolt reads SLACK_BOT_TOKEN from the environment even when given a client, and warns that
# the token "will be unused" whenever it is set, which docs/slack.md tells people to do: our
# client already holds the same token, so the warning is noise on every start.
UNUSED_TOKEN_WARNING = "As you gave `client` as well, `token` will be unused."


class UnusedTokenFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != UNUSED_TOKEN_WARNING


sdk_logger.addFilter(UnusedTokenFilter())


class SlackStartError(Exception):
    """The Slack platform cannot start as configured; the message says what to fix."""


@dataclass
class Identity:
    """Who the bot is in the workspace (from ``auth.test``)."""

    user_id: str
    bot_id: str
    team_id: str
    name: str = ""


def build_client(config: SlackConfig) -> AsyncWebClient:
    client = RateLimitedClient(
        token=config.bot_token, base_url=config.api_url, timeout=API_TIMEOUT, logger=sdk_logger
    )
    client.retry_handlers.append(ShortRetryHandler(max_retry_count=RATE_LIMIT_RETRIES))
    return client


def build_app(config: SlackConfig, client: AsyncWebClient) -> AsyncApp:
    # In Socket Mode Slack authenticates the WebSocket, so no signing secret is needed; an
    # explicit "" keeps bolt from reading SLACK_SIGNING_SECRET from the environment.
    secret = config.signing_secret if config.mode == "http" else ""
    return AsyncApp(
        client=client,
        signing_secret=secret or "",
        logger=sdk_logger,
        request_verification_enabled=config.mode == "http",
    )


def missing_settings(config: SlackConfig) -> list[str]:
    needed = ["bot_token", "signing_secret" if config.mode == "http" else "app_token"]
    return [f"platforms.slack.{key}" for key in needed if not getattr(config, key)]


async def identify(client: AsyncWebClient) -> Identity:
    """``auth.test`` with the bot token; :class:`SlackStartError` if Slack refuses it."""
    try:
        auth = await client.auth_test()
    except SlackApiError as exc:
        raise SlackStartError(
            f"platforms.slack.bot_token: Slack refused it ({exc.response.get('error')}); "
            "use the Bot User OAuth Token (xoxb-…) of the installed app, see `bothost docs slack`"
        ) from exc
    return Identity(
        user_id=auth.get("user_id", ""),
        bot_id=auth.get("bot_id", ""),
        team_id=auth.get("team_id", ""),
        name=auth.get("user", ""),
    )


async def open_socket_url(client: AsyncWebClient, app_token: str) -> str:
    """A Socket Mode WebSocket URL; :class:`SlackStartError` if the app token is refused."""
    try:
        response = await client.apps_connections_open(app_token=app_token)
    except SlackApiError as exc:
        raise SlackStartError(
            f"platforms.slack.app_token: Slack refused it ({exc.response.get('error')}); "
            "use an app-level token (xapp-…) with the connections:write scope and turn on "
            "Socket Mode, see `bothost docs slack`"
        ) from exc
    return str(response["url"])


async def check(config: Any) -> str | None:
    """For ``bothost doctor``: None when the tokens work, else one line saying what to fix.

    ``config`` is the whole :class:`~bothost.config.Config` or its ``platforms.slack``.
    """
    config = getattr(getattr(config, "platforms", None), "slack", config)
    if not config.enabled:
        return None
    missing = missing_settings(config)
    if missing:
        return f"{', '.join(missing)} not set (mode {config.mode}); see `bothost docs slack`"
    client = build_client(config)
    try:
        async with asyncio.timeout(CHECK_TIMEOUT):
            identity = await identify(client)
            if config.mode == "socket":
                await open_socket_url(client, config.app_token)
    except SlackStartError as exc:
        return str(exc)
    except (TimeoutError, OSError) as exc:
        return f"platforms.slack.api_url: cannot reach {config.api_url} ({exc or 'timed out'})"
    if not identity.user_id:
        return "platforms.slack.bot_token: auth.test did not name a bot user; is it a bot token?"
    return None
