"""Where a person logs in: the authorization URL shown, the redirect received.

Two receivers of the redirect, both checking ``state`` and taking it once:

- :class:`HostCallback`: the running host's ``GET /oauth/callback`` (core's listener). The
  process waiting for the login (``bothost mcp login`` in another process, or the host
  itself) records the login's ``state`` in ``oauth_logins`` first; the route stores what the
  redirect brought under that state, once, and the waiter reads it from the table — so the
  CLI and the host need no channel but the database they already share.
- :class:`LoopbackCallback`: a one-shot listener on 127.0.0.1 for when no host is running
  (RFC 8252 §7.3 loopback redirect).

``show`` prints the URL at once (flushed: a script reading the output sees it while the
command waits) and opens a browser when the machine has a display.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import webbrowser
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import aiohttp
from aiohttp import web

from bothost.api import HOST
from bothost.logs import connection
from bothost.mcp.oauth.errors import OAuthError
from bothost.store.conn import Conn

LOGIN_TIMEOUT = 600.0  # seconds a person has to finish logging in
CALLBACK_POLL = 0.5  # how often a waiter looks for the host's callback in the table
CALLBACK_PATH = "/oauth/callback"
DONE_PAGE = (
    "<!doctype html><title>bothost</title><p>Logged in. You can close this window and go "
    "back to bothost.</p>"
)
FAILED_PAGE = "<!doctype html><title>bothost</title><p>{}</p>"


def has_display() -> bool:
    """Whether a browser could open here (not on a headless server or in CI)."""
    if os.environ.get("BOTHOST_NO_BROWSER"):
        return False
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def show(url: str, say: Callable[[str], None]) -> None:
    """Give the person the URL now, and a browser when there is one."""
    say(url)
    if has_display():
        try:
            webbrowser.open(url)
        except webbrowser.Error:
            pass  # the URL is printed; that is enough


def callback_params(query: dict[str, str]) -> dict[str, str]:
    keep = ("code", "state", "error", "error_description", "iss")
    return {k: v for k, v in query.items() if k in keep}


# -- the host's /oauth/callback ---------------------------------------------------------


def begin(db: Conn, state: str, server: str) -> None:
    with db.transaction():
        db.execute(
            "INSERT INTO oauth_logins (state, server, created_at) VALUES (?, ?, ?)",
            [state, server, time.time()],
        )
        # logins nobody finished are of no use to anyone
        db.execute("DELETE FROM oauth_logins WHERE created_at < ?", [time.time() - LOGIN_TIMEOUT])


def arrive(db: Conn, params: dict[str, str]) -> bool:
    """Store the redirect's parameters under its state; False if unknown, stale or used."""
    with db.transaction():
        cursor = db.execute(
            "UPDATE oauth_logins SET params = ? WHERE state = ? AND params IS NULL "
            "AND created_at >= ?",
            [json.dumps(params), params.get("state", ""), time.time() - LOGIN_TIMEOUT],
        )
        return cursor.rowcount == 1


def collect(db: Conn, state: str) -> dict[str, str] | None:
    row = db.execute("SELECT params FROM oauth_logins WHERE state = ?", [state]).fetchone()
    if row is None or row[0] is None:
        return None
    with db.transaction():
        db.execute("DELETE FROM oauth_logins WHERE state = ?", [state])
    return json.loads(row[0])


async def callback_route(request: web.Request) -> web.Response:
    """``GET /oauth/callback`` on the host's listener."""
    params = callback_params(dict(request.query))
    store = request.app[HOST].store
    if not params.get("state") or not await store.run(lambda db: arrive(db, params)):
        return web.Response(
            status=400,
            text=FAILED_PAGE.format("This login link is unknown, expired or already used."),
            content_type="text/html",
        )
    return web.Response(text=DONE_PAGE, content_type="text/html")


class HostCallback:
    """Receive the redirect on the running host's listener (see module docstring)."""

    def __init__(
        self,
        store: Any,
        server: str,
        redirect_uri: str,
        say: Callable[[str], None],
        browser: bool = True,
    ) -> None:
        self.store = store
        self.server = server
        self.redirect_uri = redirect_uri
        self.say = say
        self.browser = browser  # False: the URL goes to someone elsewhere (the dashboard)

    async def authorize(self, url: str) -> dict[str, str]:
        state = dict(parse_qsl(urlsplit(url).query)).get("state", "")
        await self.store.run(lambda db: begin(db, state, self.server))
        if self.browser:
            show(url, self.say)
        else:
            self.say(url)
        try:
            async with asyncio.timeout(LOGIN_TIMEOUT):
                while (found := await self.store.run(lambda db: collect(db, state))) is None:
                    await asyncio.sleep(CALLBACK_POLL)
        except TimeoutError:
            raise OAuthError(f"nobody logged in within {LOGIN_TIMEOUT:g} s") from None
        return found


# -- a one-shot loopback listener -------------------------------------------------------


class LoopbackCallback:
    """Receive the redirect on 127.0.0.1 (a port of the system's choosing) for one login."""

    def __init__(self, say: Callable[[str], None], port: int = 0) -> None:
        self.say = say
        self.port = port
        self.redirect_uri = ""
        self._runner: web.AppRunner | None = None
        self._state = ""
        self._arrived: asyncio.Future[dict[str, str]] | None = None

    async def __aenter__(self) -> LoopbackCallback:
        app = web.Application()
        app.router.add_get(CALLBACK_PATH, self._receive)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        port = self._runner.addresses[0][1]
        self.redirect_uri = f"http://127.0.0.1:{port}{CALLBACK_PATH}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _receive(self, request: web.Request) -> web.Response:
        params = callback_params(dict(request.query))
        arrived = self._arrived
        if arrived is None or arrived.done() or params.get("state") != self._state:
            return web.Response(
                status=400,
                text=FAILED_PAGE.format("This login link is unknown or already used."),
                content_type="text/html",
            )
        arrived.set_result(params)
        return web.Response(text=DONE_PAGE, content_type="text/html")

    async def authorize(self, url: str) -> dict[str, str]:
        self._state = dict(parse_qsl(urlsplit(url).query)).get("state", "")
        self._arrived = asyncio.get_running_loop().create_future()
        show(url, self.say)
        try:
            async with asyncio.timeout(LOGIN_TIMEOUT):
                return await self._arrived
        except TimeoutError:
            raise OAuthError(f"nobody logged in within {LOGIN_TIMEOUT:g} s") from None


# -- `bothost mcp login NAME` -----------------------------------------------------------

PROBE_TIMEOUT = 15.0  # seconds for the server's first, unauthenticated answer


async def probe(url: str, headers: dict[str, str]) -> str | None:
    """The ``WWW-Authenticate`` of the server's 401 to an unauthenticated initialize; None
    when it answers without asking for a login."""
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bothost", "version": "login"},
        },
    }
    timeout = aiohttp.ClientTimeout(total=PROBE_TIMEOUT)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as http,
            http.post(
                url,
                json=body,
                headers={**headers, "Accept": "application/json, text/event-stream"},
            ) as resp,
        ):
            if resp.status in (401, 403):
                return resp.headers.get("WWW-Authenticate", "")
            return None
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        raise OAuthError(f"POST {url}: {connection.cause(exc)}") from None
