"""The OAuth 2.1 requests a client makes: registration, authorization URL, token grants.

Each function is one request with the rules the MCP authorization spec adds: PKCE S256 on
every authorization request, the ``resource`` parameter (RFC 8707) on authorization and
token requests, client authentication at the token endpoint as the registration or the
metadata says (``none``, ``client_secret_basic``, ``client_secret_post``,
``private_key_jwt``). Failures raise :class:`OAuthError` carrying the server's ``error``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import aiohttp
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, utils

from bothost.logs import connection
from bothost.mcp.oauth.discovery import AuthServer
from bothost.mcp.oauth.dpop import Prover
from bothost.mcp.oauth.errors import OAuthError
from bothost.platform import retry_after_seconds

CLIENT_NAME = "bothost"
MAX_RESPONSE_BYTES = 256 * 1024  # a token or registration answer is a few hundred bytes
ERROR_CHARS = 200
BUSY = (429, 503)  # statuses whose Retry-After says when to ask again (RFC 6585, RFC 9110)
ASSERTION_LIFETIME = 300  # seconds a private_key_jwt assertion is valid (RFC 7523 says short)
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
LOOPBACK_HOSTS = frozenset({"localhost", "::1"})  # and 127.0.0.0/8


@dataclass
class Client:
    """Who we are to one authorization server."""

    client_id: str
    client_secret: str | None = None
    auth_method: str = "none"  # at the token endpoint
    redirect_uri: str | None = None  # what it was registered with (dynamic registration)
    private_key: str | None = None  # PEM, for private_key_jwt
    signing_algorithm: str = "ES256"


def pkce_pair() -> tuple[str, str]:
    """A PKCE code verifier and its S256 challenge (RFC 7636)."""
    verifier = b64url(secrets.token_bytes(32))
    return verifier, b64url(hashlib.sha256(verifier.encode()).digest())


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def auth_method(server: AuthServer, has_secret: bool, registered: str | None = None) -> str:
    """How to authenticate at the token endpoint: the registration's answer when it gave
    one, else the best the metadata supports (RFC 8414's default is client_secret_basic)."""
    if registered:
        return registered
    if not has_secret:
        return "none"
    supported = server.auth_methods or ["client_secret_basic"]
    for method in ("client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    return "none" if "none" in supported else "client_secret_basic"


def check_issuer(server: AuthServer, params: dict[str, str]) -> None:
    """Refuse an authorization response another authorization server may have sent (RFC 9207
    §2.4, a mix-up attack): a present ``iss`` must be the metadata's issuer — compared as
    strings, with no URL normalisation, whether or not the server advertises ``iss`` — and
    a server that advertises it must send it. Checked before the code goes anywhere."""
    iss = params.get("iss")
    if iss is None:
        if server.iss_supported:
            raise OAuthError(
                f"the authorization answer carries no iss, though issuer {server.issuer} "
                "says it sends one (RFC 9207); refused"
            )
        return
    if iss != server.issuer:
        raise OAuthError(
            f"the authorization answer is from issuer {iss[:ERROR_CHARS]!r}, not from "
            f"{server.issuer}, which it was asked of (RFC 9207); refused"
        )


def application_type(redirect_uri: str) -> str:
    """SEP-837 (OpenID Connect registration's ``application_type``): ``native`` for a
    redirect to this machine (a loopback address, RFC 8252 §7.3) or to an app's own scheme,
    ``web`` for a web server's https URL. Left out, a server assumes ``web`` and may refuse
    the loopback redirect."""
    parts = urlsplit(redirect_uri)
    if parts.scheme not in ("http", "https"):
        return "native"
    host = (parts.hostname or "").lower()
    return "native" if host in LOOPBACK_HOSTS or host.startswith("127.") else "web"


def authorization_url(
    server: AuthServer,
    client: Client,
    *,
    redirect_uri: str,
    state: str,
    challenge: str,
    scopes: list[str],
    resource: str,
) -> str:
    params = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    if scopes:
        params["scope"] = " ".join(scopes)
    params["resource"] = resource
    parts = urlsplit(server.authorization_endpoint)
    query = f"{parts.query}&{urlencode(params)}" if parts.query else urlencode(params)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


async def post_form(
    http: aiohttp.ClientSession,
    url: str,
    form: dict[str, str],
    headers: dict[str, str] | None = None,
    expect: tuple[int, ...] = (200,),
    prover: Prover | None = None,
) -> dict[str, Any]:
    """POST a form and return the JSON answer; with a DPoP proof when `prover` is given."""
    headers = {"Accept": "application/json", **(headers or {})}
    if prover is not None:
        headers["DPoP"] = prover.header("POST", url)
    try:
        async with http.post(url, data=form, headers=headers) as resp:
            body = await resp.content.read(MAX_RESPONSE_BYTES + 1)
            status = resp.status
            wait = retry_after_seconds(resp.headers.get("Retry-After"))
            if prover is not None:
                prover.remember(url, resp.headers.get("DPoP-Nonce"))
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        raise OAuthError(f"POST {url}: {connection.cause(exc)}") from None
    try:
        return answer(url, status, body, expect)
    except OAuthError as exc:
        if status in BUSY:
            exc.retry_after = wait
        raise


def answer(url: str, status: int, body: bytes, expect: tuple[int, ...]) -> dict[str, Any]:
    try:
        data = json.loads(body[:MAX_RESPONSE_BYTES])
    except ValueError:
        data = None
    if status in expect and isinstance(data, dict):
        return data
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        why = data["error"]
        if isinstance(data.get("error_description"), str):
            why += f": {data['error_description'][:ERROR_CHARS]}"
        raise OAuthError(f"{url} answered {status} ({why})", code=data["error"])
    text = body[:ERROR_CHARS].decode("utf-8", "replace")
    raise OAuthError(f"{url} answered {status}: {' '.join(text.split())}")


async def register(http: aiohttp.ClientSession, server: AuthServer, redirect_uri: str) -> Client:
    """Dynamic client registration (RFC 7591)."""
    if not server.registration_endpoint:
        raise OAuthError(
            f"authorization server {server.issuer} offers no dynamic registration; "
            "configure auth.client_id (and auth.client_secret) for this server"
        )
    supported = server.auth_methods or ["client_secret_basic"]  # RFC 8414's default
    wanted = next(
        (m for m in ("client_secret_basic", "client_secret_post") if m in supported), "none"
    )
    metadata = {
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": wanted,
        "application_type": application_type(redirect_uri),
    }
    url = server.registration_endpoint
    try:
        async with http.post(url, json=metadata, headers={"Accept": "application/json"}) as resp:
            body = await resp.content.read(MAX_RESPONSE_BYTES + 1)
            status = resp.status
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        raise OAuthError(f"POST {url}: {connection.cause(exc)}") from None
    data = answer(url, status, body, (200, 201))
    client_id = data.get("client_id")
    if not isinstance(client_id, str) or not client_id:
        raise OAuthError(f"{url}: the registration answer has no client_id")
    secret = data.get("client_secret") if isinstance(data.get("client_secret"), str) else None
    registered = data.get("token_endpoint_auth_method")
    return Client(
        client_id,
        secret,
        auth_method(server, bool(secret), registered if isinstance(registered, str) else None),
        redirect_uri,
    )


def client_auth(client: Client, server: AuthServer, form: dict[str, str]) -> dict[str, str]:
    """Add the client's authentication to a token request; returns the extra headers."""
    method = client.auth_method
    if method == "client_secret_basic" and client.client_secret is not None:
        # RFC 6749 §2.3.1: each part form-encoded before base64
        pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
        return {"Authorization": f"Basic {base64.b64encode(pair.encode()).decode()}"}
    if client.client_id:  # the jwt-bearer grant may go without (RFC 7523 §3.1)
        form["client_id"] = client.client_id
    if method == "client_secret_post" and client.client_secret is not None:
        form["client_secret"] = client.client_secret
    elif method == "private_key_jwt" and client.private_key:
        form["client_assertion_type"] = JWT_BEARER
        form["client_assertion"] = signed_assertion(client, audience=server.issuer)
    return {}


async def token_request(
    http: aiohttp.ClientSession,
    server: AuthServer,
    client: Client,
    form: dict[str, str],
    bearer: bool = True,
    prover: Prover | None = None,
) -> dict[str, Any]:
    """One token endpoint request; the checked answer (a Bearer token unless `bearer` is
    False: a token exchange's answer is an assertion, token type N_A). With a `prover` the
    request carries a DPoP proof, is sent once more with the nonce an answer
    ``use_dpop_nonce`` hands out (RFC 9449 §8), and may yield a DPoP token."""
    for tries in (1, 2):
        sent = dict(form)  # a fresh client assertion each time: its jti is used once
        headers = client_auth(client, server, sent)
        try:
            data = await post_form(http, server.token_endpoint, sent, headers, prover=prover)
            break
        except OAuthError as exc:
            if prover is None or exc.code != "use_dpop_nonce" or tries == 2:
                raise
    if not isinstance(data.get("access_token"), str) or not data["access_token"]:
        raise OAuthError(f"{server.token_endpoint}: the token answer has no access_token")
    kind = data.get("token_type")
    allowed = ("bearer", "dpop") if prover is not None else ("bearer",)
    if bearer and isinstance(kind, str) and kind.lower() not in allowed:
        raise OAuthError(f"{server.token_endpoint}: token type {kind} is not Bearer")
    return data


def signed_assertion(client: Client, audience: str) -> str:
    """A private_key_jwt client assertion (RFC 7523 §2.2) signed with the configured key."""
    assert client.private_key is not None
    try:
        key = serialization.load_pem_private_key(client.private_key.encode(), password=None)
    except ValueError as exc:
        raise OAuthError(f"auth.private_key is not a PEM private key: {exc}") from None
    now = int(time.time())
    header = {"alg": client.signing_algorithm, "typ": "JWT"}
    claims = {
        "iss": client.client_id,
        "sub": client.client_id,
        "aud": audience,
        "iat": now,
        "exp": now + ASSERTION_LIFETIME,
        "jti": str(uuid.uuid4()),
    }
    signing_input = ".".join(
        b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)
    ).encode()
    if client.signing_algorithm == "ES256" and isinstance(key, ec.EllipticCurvePrivateKey):
        der = key.sign(signing_input, ec.ECDSA(hashes.SHA256()))
        r, s = utils.decode_dss_signature(der)
        signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")  # JWS wants raw r‖s
    elif client.signing_algorithm == "RS256" and isinstance(key, rsa.RSAPrivateKey):
        signature = key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    else:
        raise OAuthError(
            f"auth.private_key does not fit auth.signing_algorithm {client.signing_algorithm}"
        )
    return f"{signing_input.decode()}.{b64url(signature)}"
