"""A fake of Google's OAuth token endpoint, Gmail API v1 and Calendar API v3 on 127.0.0.1.

It speaks the real wire format closely enough for `google-api-python-client`, `google-auth`
and `google-auth-oauthlib`: JSON error bodies `{"error": {"code", "message", "errors"}}`,
401 for a missing or expired bearer token, Gmail's 404 for a history id older than what it
keeps, Calendar's 410 `fullSyncRequired` for a sync token it no longer honours, and the
authorization-code + refresh-token grants with a redirect back to the loopback server.
Tests drive it with plain methods (`deliver`, `add_event`, `expire_history`, …).
"""

from __future__ import annotations

import itertools

from aiohttp import web

from tests.helpers import serve_app

from .calendar import CalendarFake
from .gmail import GmailFake, parse_sent
from .oauth import OAuthFake
from .wire import CLIENT_ID, CLIENT_SECRET, ME, busy

__all__ = ["CLIENT_ID", "CLIENT_SECRET", "ME", "FakeGoogle", "parse_sent"]


class FakeGoogle(OAuthFake, GmailFake, CalendarFake):
    """The fake's state and its aiohttp application."""

    def __init__(self) -> None:
        self.url = ""
        self._runner: web.AppRunner | None = None
        self._ids = itertools.count(1)
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        # (status, Retry-After or None): each API request takes the first and is refused so
        self.busy: list[tuple[int, str | None]] = []
        self._init_oauth()
        self._init_gmail()
        self._init_calendar()

    async def start(self) -> str:
        app = web.Application(middlewares=[self._middleware])
        self._oauth_routes(app)
        self._gmail_routes(app)
        self._calendar_routes(app)
        self._runner, self.url = await serve_app(app, access_log=None)
        return self.url

    async def close(self) -> None:
        if self._runner:
            await self._runner.cleanup()

    @web.middleware
    async def _middleware(self, request: web.Request, handler):
        self.requests.append((request.method, request.path, dict(request.query)))
        if request.path.startswith(("/gmail/", "/calendar/")):
            refused = self._refuse_bearer(request)
            if refused is not None:
                return refused
            if self.busy:
                return busy(*self.busy.pop(0))
        return await handler(request)

    def count(self, method: str, path_end: str) -> int:
        """How many requests of `method` went to a path ending in `path_end`."""
        return sum(1 for m, p, _ in self.requests if m == method and p.endswith(path_end))
