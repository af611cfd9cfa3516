"""The fake's OAuth side: Google's authorization and token endpoints, and bearer checks.

Authorization redirects straight back to the loopback `redirect_uri` with a code (the test
plays the browser); the token endpoint serves the authorization-code and refresh-token
grants with client authentication in the form or in HTTP Basic (RFC 6749 2.3.1), and
answers `invalid_grant` for a revoked refresh token as Google does.
"""

from __future__ import annotations

import base64
import time
from typing import Any
from urllib.parse import unquote, urlencode

from aiohttp import web

from .wire import CLIENT_ID, CLIENT_SECRET, google_error

ACCESS_TOKEN_SECONDS = 3600
# Which scopes open which API (every Gmail scope names "mail", every Calendar one "calendar").
API_SCOPE_MARK = {"gmail": "mail", "calendar": "calendar"}


class OAuthFake:
    """Mixin of `FakeGoogle`: OAuth state, routes and test controls."""

    url: str

    def _init_oauth(self) -> None:
        self.codes: dict[str, list[str]] = {}
        self.refresh_tokens: dict[str, list[str]] = {}
        self.access_tokens: dict[str, float] = {}
        self.token_scopes: dict[str, list[str]] = {}
        self.refresh_count = 0
        # the token endpoint's "not now" answers to come, in order: (status, Retry-After)
        self.token_busy: list[tuple[int, str | None]] = []

    def _oauth_routes(self, app: web.Application) -> None:
        app.router.add_get("/o/oauth2/auth", self._authorize)
        app.router.add_post("/token", self._token)

    def _refuse_bearer(self, request: web.Request) -> web.Response | None:
        """401 for a missing or expired token, 403 for one without the API's scope."""
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if self.access_tokens.get(token, 0) < time.time():
            response = google_error(
                401,
                "Request had invalid authentication credentials.",
                "authError",
                "UNAUTHENTICATED",
            )
            response.headers["WWW-Authenticate"] = 'Bearer realm="https://accounts.google.com/"'
            return response
        api = request.path.split("/")[1]
        if not any(API_SCOPE_MARK[api] in scope for scope in self.token_scopes[token]):
            return google_error(
                403,
                "Request had insufficient authentication scopes.",
                "insufficientPermissions",
                "PERMISSION_DENIED",
            )
        return None

    def client_secrets(self) -> dict[str, Any]:
        """The 'Desktop app' client file Google Cloud Console lets you download."""
        return {
            "installed": {
                "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET,
                "project_id": "fake-project",
                "auth_uri": f"{self.url}/o/oauth2/auth",
                "token_uri": f"{self.url}/token",
                "redirect_uris": ["http://localhost"],
            }
        }

    def authorized_user(self, scopes: list[str]) -> dict[str, Any]:
        """A token file as `auth` writes it, with an access token that has already expired."""
        refresh = f"refresh-{next(self._ids)}"
        self.refresh_tokens[refresh] = scopes
        return {
            "token": "expired-access-token",
            "refresh_token": refresh,
            "token_uri": f"{self.url}/token",
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "scopes": scopes,
            "expiry": "2020-01-01T00:00:00Z",
        }

    def revoke_all(self) -> None:
        self.refresh_tokens.clear()
        self.access_tokens.clear()

    def expire_access_tokens(self) -> None:
        self.access_tokens.clear()

    def _issue(self, scopes: list[str]) -> dict[str, Any]:
        token = f"access-{next(self._ids)}"
        self.access_tokens[token] = time.time() + ACCESS_TOKEN_SECONDS
        self.token_scopes[token] = scopes
        return {
            "access_token": token,
            "expires_in": ACCESS_TOKEN_SECONDS,
            "scope": " ".join(scopes),
            "token_type": "Bearer",
        }

    async def _authorize(self, request: web.Request) -> web.Response:
        q = request.query
        redirect = q.get("redirect_uri", "")
        if q.get("client_id") != CLIENT_ID or q.get("response_type") != "code":
            return web.Response(status=400, text="invalid_request")
        if not redirect.startswith(("http://localhost:", "http://127.0.0.1:")):
            return web.Response(status=400, text="redirect_uri_mismatch")
        code = f"code-{next(self._ids)}"
        self.codes[code] = q.get("scope", "").split()
        params = {"state": q.get("state", ""), "code": code, "scope": q.get("scope", "")}
        raise web.HTTPFound(f"{redirect}?{urlencode(params)}")

    async def _token(self, request: web.Request) -> web.Response:
        form = await request.post()
        client = (form.get("client_id"), form.get("client_secret"))
        if request.headers.get("Authorization", "").startswith("Basic "):
            # RFC 6749 2.3.1: the client may authenticate with HTTP Basic instead of the form.
            pair = base64.b64decode(request.headers["Authorization"][6:]).decode()
            client = tuple(unquote(x) for x in pair.split(":", 1))
        if client != (CLIENT_ID, CLIENT_SECRET):
            return web.json_response({"error": "invalid_client"}, status=401)
        grant = form.get("grant_type")
        if grant == "authorization_code":
            scopes = self.codes.pop(str(form.get("code")), None)
            if scopes is None:
                return web.json_response({"error": "invalid_grant"}, status=400)
            refresh = f"refresh-{next(self._ids)}"
            self.refresh_tokens[refresh] = scopes
            return web.json_response({**self._issue(scopes), "refresh_token": refresh})
        if grant == "refresh_token" and self.token_busy:
            return token_busy(*self.token_busy.pop(0))
        if grant == "refresh_token":
            scopes = self.refresh_tokens.get(str(form.get("refresh_token")))
            if scopes is None:
                body = {
                    "error": "invalid_grant",
                    "error_description": "Token has been expired or revoked.",
                }
                return web.json_response(body, status=400)
            self.refresh_count += 1
            return web.json_response(self._issue(scopes))
        return web.json_response({"error": "unsupported_grant_type"}, status=400)


# How an OAuth token endpoint says "not now" (RFC 6749 5.2's error object; 503 with
# `temporarily_unavailable`, as RFC 6749 4.1.2.1 names it), with Retry-After when given.
TOKEN_BUSY = {
    429: ("rate_limit_exceeded", "Rate limit exceeded for the token endpoint."),
    503: ("temporarily_unavailable", "The service is currently unavailable."),
}


def token_busy(code: int, retry_after: str | None) -> web.Response:
    error, description = TOKEN_BUSY[code]
    response = web.json_response({"error": error, "error_description": description}, status=code)
    if retry_after is not None:
        response.headers["Retry-After"] = retry_after
    return response
