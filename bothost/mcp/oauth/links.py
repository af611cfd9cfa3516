"""One-time login links: what an admin is sent in chat when a remote server needs a login.

A link is ``<platforms.web.public_url>/oauth/start/<server>?t=<token>``. The token is 32
random bytes; the ``mcp_login_links`` table (core:12) keeps only its SHA-256, with the
server, the admin it was made for, when it expires and when it was used. Following the link
(:func:`start_route`) takes the token once and only then begins a fresh PKCE login in the
host and redirects the browser to the authorization server, so chat history never holds an
OAuth ``state``, a code challenge or anything else that can finish a login.

The link lives in chat history, where someone may find it later; following it must not let
them bind the bot to *their* account at the authorization server (login CSRF). So a link
starts a login at most once, for at most :data:`LINK_LIFETIME`, and only within its
*spell*: while the server still needs a login and nobody has logged it in since the link
was made (the OAuth record's ``updated_at``, set by every successful login or refresh).

Why a stored random token rather than a signed one: taking a link once needs a record
anyway, and a record in the shared database works on every host (PostgreSQL) with no
signing key to hand around.

:func:`issue` is also what makes the notice once per spell: it makes no second link for an
admin who holds a live one from this spell, so a host restart or a second host tells nobody
twice. It makes the link even when the host has no public address to put in front of it;
the row then records only that the admin was told.
"""

from __future__ import annotations

import hashlib
import html
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from bothost.api import app_key
from bothost.mcp.oauth.tokens import Record, load_record
from bothost.store.conn import Conn

TABLE = "mcp_login_links"
# A notice sent at night is still usable the next morning; after that an admin logs in from
# the dashboard or the CLI (or is told again with a fresh link at the host's next start).
LINK_LIFETIME = 24 * 3600.0
# Rows are kept this long after they expire, so the page can say "expired", not "unknown".
KEEP_EXPIRED = 7 * 24 * 3600.0
START_PATH = "/oauth/start/{server}"
CALLBACK_PATH = "/oauth/callback"  # bothost.mcp.oauth.login's; not imported: no aiohttp here
AGAIN = (
    "An admin can log in from the dashboard (Log in beside the server) or on the host with "
    "<code>bothost mcp login {server}</code>."
)
PAGE = "<!doctype html><title>bothost</title><p>{}</p><p>{}</p>"


@dataclass(frozen=True)
class Refusal:
    """Why a link starts nothing: the HTTP status and a sentence for the person."""

    status: int
    message: str


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def needs_login(record: Record | None) -> bool:
    return record is None or not record.get("access_token") or bool(record.get("login_needed"))


def last_login(record: Record | None) -> float:
    """When the server last obtained a token (a login or a refresh); 0 if never."""
    return float((record or {}).get("updated_at") or 0.0)


def issue(db: Conn, server: str, admin: str, now: float | None = None) -> str | None:
    """A new link's token for `admin`, or None when they hold a live one of this spell."""
    now = time.time() if now is None else now
    since = last_login(load_record(db, server))
    with db.transaction():
        db.execute(f"DELETE FROM {TABLE} WHERE expires_at < ?", [now - KEEP_EXPIRED])
        live = db.value(
            f"SELECT COUNT(*) FROM {TABLE} WHERE server = ? AND admin = ? AND used_at IS NULL "
            "AND expires_at > ? AND created_at > ?",
            [server, admin, now, since],
        )
        if live:
            return None
        token = secrets.token_urlsafe(32)
        db.insert(
            TABLE,
            {
                "token_hash": digest(token),
                "server": server,
                "admin": admin,
                "created_at": now,
                "expires_at": now + LINK_LIFETIME,
            },
        )
    return token


def take(db: Conn, server: str, token: str, now: float | None = None) -> Refusal | None:
    """Use the link up; None when it may start a login, else why not."""
    now = time.time() if now is None else now
    row = db.one(f"SELECT * FROM {TABLE} WHERE token_hash = ?", [digest(token)]) if token else None
    if row is None or row["server"] != server:
        return Refusal(403, "This is not a login link bothost made, or it is too old.")
    if row["used_at"] is not None:
        return Refusal(410, "This login link was used already; each one works once.")
    if row["expires_at"] <= now:
        return Refusal(410, "This login link expired.")
    record = load_record(db, server)
    if not needs_login(record) or last_login(record) >= row["created_at"]:
        return Refusal(409, f"{server} was logged in after this link was sent; it is spent.")
    with db.transaction():
        taken = db.execute(
            f"UPDATE {TABLE} SET used_at = ? WHERE token_hash = ? AND used_at IS NULL",
            [now, digest(token)],
        )
    if taken.rowcount != 1:  # another click won the race
        return Refusal(410, "This login link was used already; each one works once.")
    return None


def release(db: Conn, token: str) -> None:
    """Give a taken link back: the login it was to start could not begin."""
    with db.transaction():
        db.execute(f"UPDATE {TABLE} SET used_at = NULL WHERE token_hash = ?", [digest(token)])


def public_base(config: Any) -> str | None:
    """The address people's browsers reach the host's listener at, if it has one."""
    web = config.platforms.get("web")
    if web is None or not web.enabled or not getattr(web, "public_url", None):
        return None
    return str(web.public_url).rstrip("/")


def link_url(base: str, server: str, token: str) -> str:
    return f"{base}{START_PATH.format(server=quote(server, safe=''))}?t={token}"


def page(refusal: Refusal, server: str) -> Any:
    from aiohttp import web

    body = PAGE.format(html.escape(refusal.message), AGAIN.format(server=html.escape(server)))
    return web.Response(status=refusal.status, text=body, content_type="text/html")


async def start_route(request: Any) -> Any:
    """``GET /oauth/start/{server}?t=…``: take the link, begin a login, send the browser on."""
    from aiohttp import web

    host = request.app[app_key("HOST")]
    server = request.match_info["server"]
    token = request.query.get("t", "")
    refusal = await host.store.run(lambda db: take(db, server, token))
    if refusal is not None:
        return page(refusal, server)
    base = public_base(host.config) or f"{request.scheme}://{request.host}"
    try:
        url = await host.start_mcp_login(server, f"{base}{CALLBACK_PATH}")
    except ValueError as exc:  # not a remote server (any more), or its discovery failed
        await host.store.run(lambda db: release(db, token))
        return page(Refusal(409, f"The login could not begin: {exc}"), server)
    # 303: the browser GETs the authorization URL; no-store keeps it out of caches
    raise web.HTTPSeeOther(url, headers={"Cache-Control": "no-store"})
