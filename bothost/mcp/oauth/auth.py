"""The OAuth side of one remote server's connection: the Streamable HTTP transport's hook.

The transport asks :meth:`OAuth.prepare` before each request (a token that expires within
``REFRESH_MARGIN`` is refreshed first), sends :meth:`OAuth.authorization` as its
``Authorization`` header, and hands every 401 and 403 to :meth:`OAuth.challenge`, which
says whether to send the request again:

- 401: refresh when there is a refresh token; else (or when refreshing fails) log in from
  the start — discovery, registration, then a grant. The machine grants
  (:mod:`~bothost.mcp.oauth.grants`: client credentials, cross-app access, jwt-bearer) need nobody;
  the authorization code grant needs an :class:`Authorizer` (the person behind
  ``bothost mcp login``, or the conformance driver). Without one the server is left in the
  "login needed" state: :class:`LoginRequiredError`, and ``on_login_needed`` is told once.
- a refresh answered 429 or 503 with ``Retry-After`` is sent again after that wait when it
  ends within ``REFRESH_DEADLINE``; a longer wait fails the refresh at once, and refreshes
  before it has passed fail without asking the server (:meth:`OAuth._token_request`).
- 403 ``insufficient_scope`` (step-up): log in again asking for the scopes held plus those
  the challenge names — unless they are held already, since asking again cannot help. The
  transport bounds the retries of one request (``MAX_AUTH_RETRIES``).

DPoP (RFC 9449, SEP-1932; :mod:`~bothost.mcp.oauth.dpop`): when ``auth.dpop`` says so, or
(unset) the authorization server offers ES256 for it or the server challenged with the DPoP
scheme, the token requests carry proofs of a key kept in the record, the token goes as
``Authorization: DPoP …`` with a fresh proof per request (:meth:`OAuth.proof`), and a
``use_dpop_nonce`` refusal is answered by sending again with the server's nonce.

Scope selection is the spec's: ``auth.scopes`` from config, else the challenge's ``scope``,
else the Protected Resource Metadata's ``scopes_supported``, else none; ``offline_access``
is added when the authorization server lists it (a refresh token outlives the session).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import Any, Protocol

import aiohttp

from bothost.config import McpAuthConfig
from bothost.mcp.oauth import dpop, flow, grants
from bothost.mcp.oauth.discovery import AuthServer, Challenge, Discovery, discover, parse_challenge
from bothost.mcp.oauth.errors import LoginRequiredError, OAuthError
from bothost.mcp.oauth.tokens import Record, TokenStore, remember_secrets

# seconds: refresh a token this close to expiry before using it (half its life when shorter,
# so a short-lived token is not refreshed before every request)
REFRESH_MARGIN = 60.0
OAUTH_TIMEOUT = 15.0  # seconds for one discovery, registration or token request
# the stored record is read again this often, so a login or logout made by another process
# (`bothost mcp login` / `logout` while the host runs) reaches this connection
RELOAD_AFTER = 5.0
DEAD_GRANT_ERRORS = ("invalid_grant", "invalid_client", "unauthorized_client")
# seconds one refresh may take, waits its server asks for (Retry-After) included: a request
# waits on it, so it gets what one token request gets
REFRESH_DEADLINE = OAUTH_TIMEOUT
REFRESH_TRIES = 3  # token requests one refresh sends at most (a Retry-After of 0 each time)

OnLoginNeeded = Callable[[str], Any]
# grant -> how to get a token with no person (bothost.mcp.oauth.grants)
MACHINE_GRANTS = {
    "client_credentials": grants.client_credentials,
    "cross_app_access": grants.cross_app_access,
    "jwt_bearer": grants.jwt_bearer,
}


class Authorizer(Protocol):
    """Whoever follows the authorization URL: a person's browser, or a test."""

    redirect_uri: str

    async def authorize(self, url: str) -> dict[str, str]:
        """Have `url` visited; return the query parameters the redirect brought back."""
        ...


class OAuth:
    """See module docstring."""

    def __init__(
        self,
        name: str,
        server_url: str,
        tokens: TokenStore,
        *,
        config: McpAuthConfig | None = None,
        log: logging.Logger,
        authorizer: Authorizer | None = None,
        on_login_needed: OnLoginNeeded | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.name = name
        self.server_url = server_url
        self.tokens = tokens
        self.config = config or McpAuthConfig()
        self.log = log
        self.authorizer = authorizer
        self.on_login_needed = on_login_needed
        self.record: Record | None = None
        self._loaded = False
        self._loaded_at = 0.0
        self._lock = asyncio.Lock()
        self.clock, self.sleep = clock, sleep
        self._refresh_not_before = 0.0  # by `clock`: the token endpoint's Retry-After
        self.nonces = dpop.Nonces()  # DPoP-Nonce values the servers handed out

    # -- what the transport asks -------------------------------------------------------

    def authorization(self) -> str | None:
        record = self.record or {}
        token = record.get("access_token")
        if not token:
            return None
        # RFC 9449 §7.1: a DPoP-bound token is presented with its own scheme
        return f"DPoP {token}" if record.get("token_type") == "DPoP" else f"Bearer {token}"

    def proof(self, method: str, url: str, authorization: str | None) -> dict[str, str]:
        """The ``DPoP`` header a request with `authorization` needs (none for Bearer)."""
        key = (self.record or {}).get("dpop_key")
        if not key or not authorization or not authorization.startswith("DPoP "):
            return {}
        token = authorization.removeprefix("DPoP ")
        return {"DPoP": dpop.Prover(key, self.nonces).header(method, url, token)}

    def answered(self, url: str, headers: Any) -> None:
        """Note the ``DPoP-Nonce`` a server's answer carries (RFC 9449 §9: any answer may)."""
        self.nonces.remember(url, headers.get("DPoP-Nonce"))

    async def prepare(self) -> None:
        """Load the stored record (again after RELOAD_AFTER); refresh a token about to expire."""
        if not self._loaded or time.monotonic() - self._loaded_at > RELOAD_AFTER:
            async with self._lock:
                if not self._loaded or time.monotonic() - self._loaded_at > RELOAD_AFTER:
                    self.record = await self.tokens.load(self.name)
                    remember_secrets(self.name, self.record)
                    self._loaded, self._loaded_at = True, time.monotonic()
        record = self.record or {}
        expires = record.get("expires_at")
        margin = min(REFRESH_MARGIN, (record.get("lifetime") or REFRESH_MARGIN) / 2)
        if record.get("refresh_token") and expires and expires - time.time() < margin:
            sent = self.authorization()
            async with self._lock:
                if self.authorization() == sent:
                    try:
                        await self._refresh_or_drop()
                    except OAuthError:
                        pass  # logged; the token may still do, and a 401 tries again

    async def challenge(self, status: int, header: str, sent: str | None) -> bool:
        """Handle a 401 or 403; True when the request should be sent again."""
        async with self._lock:
            # another process may have logged in meanwhile (`bothost mcp login`): its token
            # is the one to try, and its record must not be overwritten with a stale one
            self.record = await self.tokens.load(self.name)
            self._loaded_at = time.monotonic()
            if sent != self.authorization() and self.authorization() is not None:
                return True  # another request (or process) renewed the token meanwhile
            found = parse_challenge(header)
            if found.error == "use_dpop_nonce":
                # RFC 9449 §9: sent again with the nonce this answer carried (answered())
                return bool(sent and sent.startswith("DPoP ") and self.nonces.get(self.server_url))
            if status == 403:
                return await self._step_up(found)
            if await self._refresh_or_drop():
                return True
            await self._obtain(found, None, "a person has to log in")
            return True

    # -- logging in ----------------------------------------------------------------------

    async def login(self, header: str = "") -> None:
        """Log in from the start (``bothost mcp login``): discovery, registration, a grant."""
        async with self._lock:
            self.record = await self.tokens.load(self.name)
            self._loaded, self._loaded_at = True, time.monotonic()
            await self._obtain(parse_challenge(header), None, "a person has to log in")

    async def logout(self) -> None:
        async with self._lock:
            self.record = None
            self._loaded, self._loaded_at = True, time.monotonic()
            await self.tokens.clear(self.name)

    async def _step_up(self, found: Challenge) -> bool:
        if found.error != "insufficient_scope":
            return False  # a plain refusal: asking again would not change it
        held = list((self.record or {}).get("scopes") or [])
        if set(found.scope) <= set(held):
            self.log.warning(
                "the server refuses with insufficient_scope although the token holds %s",
                " ".join(found.scope) or "every scope asked for",
            )
            return False
        wanted = held + [s for s in found.scope if s not in held]
        self.log.info("the server asks for more scope (%s); logging in again", " ".join(wanted))
        await self._obtain(found, wanted, f"the server asks for scope {' '.join(found.scope)}")
        return True

    async def _refresh_or_drop(self) -> bool:
        """Refresh the access token. A refresh token the server refuses (``invalid_grant``
        and kin) is dropped: False, a person must log in. Any other failure (the server
        unreachable, a 5xx) keeps it and raises, so the request fails but a later one
        tries again instead of asking a person for a login that is still good."""
        record = self.record or {}
        if not record.get("refresh_token") or not record.get("server"):
            return False
        server = AuthServer(**record["server"])
        client = flow.Client(**record["client"])
        form = {"grant_type": "refresh_token", "refresh_token": record["refresh_token"]}
        if record.get("resource"):
            form["resource"] = record["resource"]
        try:
            answer = await self._token_request(server, client, form)
        except OAuthError as exc:
            self.log.warning("refreshing the access token failed: %s", exc)
            if exc.code not in DEAD_GRANT_ERRORS:
                raise
            record = dict(record, access_token=None, expires_at=None, refresh_token=None)
            self.record = record
            await self.tokens.save(self.name, record)
            return False
        self.log.info("access token refreshed")
        await self._keep(answer, record, record.get("scopes") or [])
        return True

    async def _token_request(
        self, server: AuthServer, client: flow.Client, form: dict[str, str]
    ) -> dict[str, Any]:
        """A refresh's token request, sent again when a 429 or 503 names a Retry-After that
        ends within REFRESH_DEADLINE. A longer one fails the refresh at once and holds back
        the next ones until it has passed, so a busy server is not asked again early."""
        now = self.clock()
        if now < self._refresh_not_before:
            raise OAuthError(
                f"{server.token_endpoint} asked to wait before the next refresh; "
                f"{self._refresh_not_before - now:.0f} s left"
            )
        deadline, tries = now + REFRESH_DEADLINE, 0
        while True:
            tries += 1
            try:
                async with self._http() as http:
                    return await flow.token_request(
                        http, server, client, form, prover=self._prover(self.record)
                    )
            except OAuthError as exc:
                wait = exc.retry_after
                if wait is None:
                    raise
                if tries == REFRESH_TRIES or self.clock() + wait > deadline:
                    self._refresh_not_before = self.clock() + wait
                    raise OAuthError(
                        f"{exc}; it asks to retry after {wait:.0f} s, which the refresh "
                        f"cannot wait (it has {REFRESH_DEADLINE:.0f} s)",
                        exc.code,
                        wait,
                    ) from None
                self.log.info("the token endpoint is busy; retrying after %.1f s", wait)
                await self.sleep(wait)

    async def _obtain(self, found: Challenge, scopes: list[str] | None, why: str) -> None:
        if self.config.grant == "authorization_code" and self.authorizer is None:
            await self._login_needed(why, scopes)
        async with self._http() as http:
            found_at = await discover(http, self.server_url, found)
            if scopes is None:
                scopes = self._scopes(found, found_at)
            key = self._dpop_key(found_at.server, found)
            prover = dpop.Prover(key, self.nonces) if key else None
            grant = MACHINE_GRANTS.get(self.config.grant)
            if grant is not None:
                answer, client = await grant(http, self.config, found_at, scopes, prover)
            else:
                answer, client = await self._authorization_code(http, found_at, scopes, prover)
        record = {
            "server": asdict(found_at.server),
            "client": asdict(client),
            "resource": found_at.resource,
            "refresh_token": None,
            "dpop_key": key,
        }
        await self._keep(answer, record, scopes)
        self.log.info("logged in at %s", found_at.server.issuer)

    def _dpop_key(self, server: AuthServer, found: Challenge) -> dpop.Jwk | None:
        """The key to bind tokens to, or None for Bearer tokens. ``auth.dpop`` decides when
        set; else DPoP is used when the authorization server offers ES256 for it or the
        server challenged with the DPoP scheme. The key a login made before is kept."""
        wanted = self.config.dpop
        offered = server.dpop_algs or []
        if wanted is None:
            wanted = dpop.ALGORITHM in offered or found.scheme == "dpop"
        if not wanted:
            return None
        if offered and dpop.ALGORITHM not in offered:
            raise OAuthError(
                f"authorization server {server.issuer} takes DPoP proofs signed with "
                f"{', '.join(offered)} only; bothost signs with {dpop.ALGORITHM}"
            )
        key: dpop.Jwk | None = (self.record or {}).get("dpop_key")
        return key or dpop.new_key()

    def _prover(self, record: Record | None) -> dpop.Prover | None:
        key = (record or {}).get("dpop_key")
        return dpop.Prover(key, self.nonces) if key else None

    def _scopes(self, found: Challenge, found_at: Discovery) -> list[str]:
        scopes = list(self.config.scopes or found.scope or found_at.scopes_supported or [])
        scopes += [s for s in (self.record or {}).get("wanted_scopes") or [] if s not in scopes]
        offered = found_at.server.scopes_supported or []
        if (
            self.config.grant == "authorization_code"
            and "offline_access" in offered
            and "offline_access" not in scopes
        ):
            scopes.append("offline_access")  # SEP-2207: ask for a refresh token when offered
        return scopes

    async def _authorization_code(
        self,
        http: aiohttp.ClientSession,
        found_at: Discovery,
        scopes: list[str],
        prover: dpop.Prover | None,
    ) -> tuple[dict[str, Any], flow.Client]:
        assert self.authorizer is not None
        server = found_at.server
        if server.pkce_methods is not None and "S256" not in server.pkce_methods:
            raise OAuthError(
                f"authorization server {server.issuer} does not offer PKCE S256; "
                "the MCP authorization spec forbids logging in without it"
            )
        redirect_uri = self.authorizer.redirect_uri
        client = await self._client(http, server, redirect_uri)
        verifier, code_challenge = flow.pkce_pair()
        state = secrets.token_urlsafe(24)
        url = flow.authorization_url(
            server,
            client,
            redirect_uri=redirect_uri,
            state=state,
            challenge=code_challenge,
            scopes=scopes,
            resource=found_at.resource,
        )
        params = await self.authorizer.authorize(url)
        if params.get("state") != state:
            raise OAuthError("the authorization answer's state does not match; try again")
        flow.check_issuer(server, params)  # error answers too: a mix-up may be an error
        if params.get("error"):
            why = params["error"] + (
                f": {params['error_description']}" if params.get("error_description") else ""
            )
            raise OAuthError(f"authorization refused ({why})", code=params["error"])
        if not params.get("code"):
            raise OAuthError("the authorization answer carries no code")
        form = {
            "grant_type": "authorization_code",
            "code": params["code"],
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
            "resource": found_at.resource,
        }
        return await flow.token_request(http, server, client, form, prover=prover), client

    async def _client(
        self, http: aiohttp.ClientSession, server: AuthServer, redirect_uri: str
    ) -> flow.Client:
        """Pre-registered from config, else a Client ID Metadata Document, else the stored
        registration with this server, else dynamic registration."""
        config = self.config
        if config.client_id:
            secret = config.client_secret
            return flow.Client(config.client_id, secret, flow.auth_method(server, bool(secret)))
        if server.cimd and config.client_metadata_url:
            return flow.Client(config.client_metadata_url, None, "none")
        stored = (self.record or {}).get("client")
        if (
            stored
            and (self.record or {}).get("server", {}).get("issuer") == server.issuer
            and stored.get("redirect_uri") == redirect_uri
        ):
            return flow.Client(**stored)
        client = await flow.register(http, server, redirect_uri)
        self.log.info("registered with %s as client %s", server.issuer, client.client_id)
        return client

    async def _keep(self, answer: dict[str, Any], record: Record, scopes: list[str]) -> None:
        granted = answer.get("scope")
        expires_in = answer.get("expires_in")
        lifetime = float(expires_in) if isinstance(expires_in, int | float) else None
        lifetime = lifetime if lifetime and lifetime > 0 else None
        record = dict(
            record,
            access_token=answer["access_token"],
            # an answer without DPoP binds nothing: the token is used as a Bearer one
            token_type="DPoP" if str(answer.get("token_type")).lower() == "dpop" else "Bearer",
            # RFC 6749 §6: a refresh answer without a refresh token keeps the old one
            refresh_token=answer.get("refresh_token") or record.get("refresh_token"),
            expires_at=time.time() + lifetime if lifetime else None,
            lifetime=lifetime,
            scopes=granted.split() if isinstance(granted, str) else list(scopes),
            login_needed=None,
            updated_at=time.time(),
        )
        remember_secrets(self.name, record)
        self.record = record
        await self.tokens.save(self.name, record)

    async def _login_needed(self, why: str, scopes: list[str] | None) -> None:
        message = f"login needed: {why} (bothost mcp login {self.name})"
        # a step-up's scopes are kept, so the person's next login asks for them too
        record = dict(self.record or {}, access_token=None, login_needed=why)
        if scopes:
            record["wanted_scopes"] = scopes
        if self.record != record:
            self.record = record
            await self.tokens.save(self.name, record)
        if self.on_login_needed is not None:
            self.on_login_needed(message)
        raise LoginRequiredError(message)

    def _http(self) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=OAUTH_TIMEOUT))
