"""Slack's rate limits: a short ``Retry-After`` is waited out, a long one is remembered.

Slack answers 429 with ``Retry-After`` (seconds). The SDK's retry handler sleeps that long
whatever it is; a ten-minute wait inside a briefing's delivery held the tick until the
delivery deadline cut it, and the next tick then posted before Slack allowed it. Here a
wait up to ``MAX_WAIT`` is still slept (a burst over the per-channel pace clears in a second
or two), a longer one fails the call at once naming the wait, and the client refuses that
method itself, without calling Slack, until the time Slack gave: a briefing's delivery is
a failed attempt the next tick retries (at least once, nothing lost), and a reply in chat
fails in a moment instead of hanging its turn.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bothost.platform import SEND_DEADLINE, retry_after_seconds

# Longest Retry-After slept inside one call: well within a delivery's deadline, so a wait
# the deadline would cut anyway is not started (and its retry would come too early).
MAX_WAIT = SEND_DEADLINE / 4
RATE_LIMITED = 429


def retry_after(headers: Any) -> float | None:
    """The seconds in a ``Retry-After`` header (the SDK gives values as lists), or None."""
    for key, value in dict(headers or {}).items():
        if key.lower() == "retry-after":
            text = value[0] if isinstance(value, list | tuple) and value else value
            return retry_after_seconds(text if isinstance(text, str) else None)
    return None


class ShortRetryHandler(AsyncRateLimitErrorRetryHandler):
    """The SDK's 429 handler, for waits up to ``MAX_WAIT`` only."""

    async def _can_retry_async(
        self, *, state: Any, request: Any, response: Any = None, error: Any = None
    ) -> bool:
        if response is None or response.status_code != RATE_LIMITED:
            return False
        wait = retry_after(response.headers)
        return wait is None or wait <= MAX_WAIT


class RateLimitedClient(AsyncWebClient):
    """An ``AsyncWebClient`` that honours a long ``Retry-After`` per API method."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.clock: Callable[[], float] = time.monotonic
        self.held_until: dict[str, float] = {}  # API method → when Slack allows it again

    async def api_call(self, api_method: str, **kwargs: Any) -> AsyncSlackResponse:
        now = self.clock()
        until = self.held_until.get(api_method)
        if until is not None and now < until:
            left = until - now
            raise SlackApiError(
                f"Slack rate-limited {api_method}: not called again for {left:.0f} s "
                "(its Retry-After); retried by a later attempt",
                self._held_response(api_method, left),
            )
        self.held_until.pop(api_method, None)
        try:
            return await super().api_call(api_method, **kwargs)
        except SlackApiError as exc:
            wait = retry_after(getattr(exc.response, "headers", None))
            if getattr(exc.response, "status_code", None) != RATE_LIMITED or wait is None:
                raise
            self.held_until[api_method] = self.clock() + wait
            raise SlackApiError(
                f"Slack rate-limited {api_method} with Retry-After {wait:g} s, longer than "
                f"a call may wait ({MAX_WAIT:g} s); retried by a later attempt after that",
                exc.response,
            ) from None

    def _held_response(self, api_method: str, left: float) -> AsyncSlackResponse:
        """The answer Slack would give: a 429 with the wait that is left."""
        return AsyncSlackResponse(
            client=self,
            http_verb="POST",
            api_url=f"{self.base_url}{api_method}",
            req_args={},
            data={"ok": False, "error": "ratelimited"},
            headers={"Retry-After": [str(int(left) + 1)]},
            status_code=RATE_LIMITED,
        )
