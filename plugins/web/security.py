"""Who may use the web UI and its API: Host and Origin checks, the token, CSRF.

The web UI gives admin rights (it approves tool calls), so every request is checked here
before a handler runs:

* **Token.** When ``http.token`` is set, a request must carry it, either as
  ``Authorization: Bearer <token>`` (API clients) or in the HttpOnly cookie the page sets
  after one visit to ``/?token=<token>``. Without a token only loopback peers are served
  (the core refuses a non-loopback bind without one).
* **Host.** A browser tricked by DNS rebinding sends a foreign ``Host``; only loopback
  names and the bind address are accepted, unless the request holds the token (then any
  name a reverse proxy uses is fine: the attacker's page cannot have our cookie).
* **Origin and CSRF.** No request may come from a foreign ``Origin`` (a foreign page's
  event stream would otherwise count as a page there to answer questions). A
  state-changing request must be JSON (a cross-site form cannot send ``application/json``
  without a CORS preflight we never grant), must not come from a cross-site
  ``Sec-Fetch-Site``, and — when it comes from a browser
  (it has an Origin, fetch metadata or cookies) and is not bearer-authenticated — must echo
  the page's CSRF token in ``X-CSRF-Token`` (double submit: header equals HttpOnly cookie).
  Non-browser clients on loopback (curl, scripts) need no CSRF token: CSRF needs a browser.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bothost.api import HostApi, is_loopback

TOKEN_COOKIE = "bothost_token"
CSRF_COOKIE = "bothost_csrf"
CSRF_HEADER = "X-CSRF-Token"
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
WILDCARD_BINDS = {"0.0.0.0", "::", ""}
COOKIE_MAX_AGE = 30 * 24 * 3600  # a month; the token itself does not expire
CSRF_BYTES = 24  # 192 bits of randomness, 32 URL-safe characters
PORT = re.compile(r"(?::[0-9]{1,5})?")  # what may follow "]" in a Host header
CSRF_SHAPE = re.compile(r"[A-Za-z0-9_-]{32}")  # what secrets.token_urlsafe(CSRF_BYTES) gives

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# headers every page and API answer gets: no framing (the approve button must not be
# clickjacked), scripts and styles only from our own /static/
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


# what every other answer of the listener gets too (static files, /openapi.json, /healthz,
# webhooks, aiohttp's 400 for a malformed request, the 503 at the connection cap: declared
# with bothost.api.answer_headers): the page's template opened as /static/index.html must
# not be framed either
DEFAULT_HEADERS = {k: v for k, v in PAGE_HEADERS.items() if k != "Cache-Control"}


def forbidden(reason: str) -> web.HTTPForbidden:
    return web.HTTPForbidden(text=f"{reason}\n", headers=PAGE_HEADERS)


def host_name(request: web.Request) -> str:
    """The hostname of the Host header, without port or IPv6 brackets."""
    host = request.host or ""
    if host.startswith("["):
        inside, _, rest = host[1:].partition("]")
        # only "[addr]" or "[addr]:port" is an IPv6 host; more text names some other host
        return inside if PORT.fullmatch(rest) else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def presented_token(request: web.Request) -> str:
    """The bearer token, or the token cookie's value (see :func:`cookie_value`)."""
    auth = request.headers.get("Authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return request.cookies.get(TOKEN_COOKIE, "")


def cookie_value(token: str) -> str:
    """What the token cookie holds: derived from the token, so no answer ever carries the
    token itself (a Set-Cookie header is an answer like any other)."""
    return hmac.new(token.encode(), b"bothost web token cookie", hashlib.sha256).hexdigest()


def bearer(request: web.Request) -> bool:
    return request.headers.get("Authorization", "").lower().startswith("bearer ")


def same(a: str, b: str) -> bool:
    return bool(a) and bool(b) and hmac.compare_digest(a.encode(), b.encode())


class Access:
    """The checks for one host's web config; ``guard`` wraps route handlers with them."""

    def __init__(self, host: HostApi) -> None:
        self.host = host

    @property
    def token(self) -> str | None:
        return self.host.config.http.token or None

    def authenticated(self, request: web.Request) -> bool:
        """Whether the request holds the token (False when no token is configured)."""
        if self.token is None:
            return False
        expected = self.token if bearer(request) else cookie_value(self.token)
        return same(presented_token(request), expected)

    def host_allowed(self, request: web.Request) -> bool:
        name = host_name(request).lower()
        bind = self.host.config.http.host.lower()
        if name in LOOPBACK_NAMES or is_loopback(name):
            return True
        return bool(name) and name == bind and bind not in WILDCARD_BINDS

    def check_reader(self, request: web.Request) -> None:
        """Token (or loopback peer) and Host; raises an HTTP error when refused."""
        if self.token is not None:
            if not self.authenticated(request):
                raise web.HTTPUnauthorized(
                    text="this bothost needs its token: open /?token=<http.token> "
                    "or send Authorization: Bearer <token>\n",
                    headers=PAGE_HEADERS,
                )
        elif not is_loopback(request.remote or ""):
            raise forbidden("only loopback clients may use the web UI without a token")
        if not self.host_allowed(request) and not self.authenticated(request):
            raise forbidden(f"unexpected Host header {request.host!r}")
        # A browser names a foreign page's Origin on its fetches and event streams; our own
        # page's reads send ours or none. A foreign page cannot read the answer, but an
        # open stream of its would count as a page there to answer questions.
        origin = request.headers.get("Origin")
        if origin is not None and origin != f"{request.scheme}://{request.host}":
            raise forbidden(f"cross-origin request from {origin!r} refused")

    def check_writer(self, request: web.Request) -> None:
        """Everything :meth:`check_reader` checks (Origin included), plus fetch metadata,
        JSON and CSRF."""
        self.check_reader(request)
        origin = request.headers.get("Origin")
        if request.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
            raise forbidden("cross-site request refused")
        if request.content_type != "application/json":
            raise web.HTTPUnsupportedMediaType(text="send application/json\n", headers=PAGE_HEADERS)
        from_browser = (
            origin is not None or "Sec-Fetch-Site" in request.headers or bool(request.cookies)
        )
        if from_browser and not bearer(request):
            if not same(request.headers.get(CSRF_HEADER, ""), request.cookies.get(CSRF_COOKIE, "")):
                raise forbidden("missing or wrong CSRF token (reload the page)")

    def guard(self, handler: Handler, *, writes: bool = False) -> Handler:
        check = self.check_writer if writes else self.check_reader

        async def guarded(request: web.Request) -> web.StreamResponse:
            check(request)
            response = await handler(request)
            if not response.prepared:  # a stream has sent its headers already
                for name, value in PAGE_HEADERS.items():
                    response.headers.setdefault(name, value)
            return response

        guarded.__name__ = getattr(handler, "__name__", "guarded")
        return guarded


def csrf_token(request: web.Request) -> str:
    """The browser's CSRF token: the one in its cookie when it has the shape we mint, else
    a fresh one. Cookies are not kept apart by port: a page on another localhost port can
    set this one, and the value is written into the page."""
    kept = request.cookies.get(CSRF_COOKIE, "")
    return kept if CSRF_SHAPE.fullmatch(kept) else secrets.token_urlsafe(CSRF_BYTES)


def set_page_cookies(
    response: web.StreamResponse, csrf: str, token: str | None = None, secure: bool = False
) -> None:
    """The CSRF cookie, and the token cookie after ``/?token=``; ``Secure`` over HTTPS."""
    options: dict[str, Any] = {
        "httponly": True,
        "samesite": "Strict",
        "path": "/",
        "max_age": COOKIE_MAX_AGE,
        "secure": secure or None,
    }
    response.set_cookie(CSRF_COOKIE, csrf, **options)
    if token is not None:
        response.set_cookie(TOKEN_COOKIE, cookie_value(token), **options)
