"""Finding a protected MCP server's authorization server (MCP authorization, 2025-11-25).

The order is the spec's: the ``resource_metadata`` URL of the 401's ``WWW-Authenticate``,
else Protected Resource Metadata (RFC 9728) at the path-based well-known URL, then at the
root; the authorization server it names is asked for RFC 8414 metadata, then OpenID
Connect discovery, each path-aware (an issuer with a path never falls back to the root).
A server without Protected Resource Metadata is a 2025-03-26 server: its origin is the
authorization server, and without metadata there its default ``/authorize``, ``/token`` and
``/register`` endpoints are used.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from bothost.logs import connection
from bothost.mcp.oauth.errors import OAuthError

MAX_METADATA_BYTES = 256 * 1024  # a metadata document is a few KB; refuse anything huge
# auth-param = token "=" ( token / quoted-string ), RFC 9110 §11.2
AUTH_PARAM = re.compile(r'([A-Za-z0-9_.-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]+)')


@dataclass
class Challenge:
    """What a 401/403 ``WWW-Authenticate: Bearer …`` (or ``DPoP …``, RFC 9449 §7.1) says."""

    error: str = ""
    scope: list[str] = field(default_factory=list)
    resource_metadata: str | None = None
    scheme: str = ""  # "bearer" or "dpop", lower-case; "" when there was no challenge


def parse_challenge(header: str) -> Challenge:
    """The first Bearer or DPoP challenge's parameters; an empty Challenge when there is
    none. A DPoP server challenges with its own scheme, with the same parameters."""
    match = re.search(r"(?i)\b(bearer|dpop)\b", header)
    if match is None:
        return Challenge()
    params: dict[str, str] = {}
    for name, value in AUTH_PARAM.findall(header[match.end() :]):
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        params.setdefault(name.lower(), value)
    return Challenge(
        error=params.get("error", ""),
        scope=params.get("scope", "").split(),
        resource_metadata=params.get("resource_metadata") or None,
        scheme=match.group(1).lower(),
    )


@dataclass
class AuthServer:
    """The endpoints and abilities of one authorization server."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None
    scopes_supported: list[str] | None
    auth_methods: list[str] | None  # token_endpoint_auth_methods_supported
    pkce_methods: list[str] | None  # None: no metadata at all (2025-03-26 fallback)
    cimd: bool  # client_id_metadata_document_supported
    # authorization_response_iss_parameter_supported (RFC 9207); a default, so records
    # stored before it was kept still load
    iss_supported: bool = False
    dpop_algs: list[str] | None = None  # dpop_signing_alg_values_supported (RFC 9449 §5.1)

    @classmethod
    def from_metadata(cls, issuer: str, data: dict[str, Any]) -> AuthServer:
        def strings(key: str) -> list[str] | None:
            value = data.get(key)
            return [str(v) for v in value] if isinstance(value, list) else None

        for key in ("authorization_endpoint", "token_endpoint"):
            if not isinstance(data.get(key), str):
                raise OAuthError(f"authorization server metadata of {issuer} lacks {key}")
        for key in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
            if data.get(key):
                check_endpoint(issuer, key, str(data[key]))
        return cls(
            issuer=str(data.get("issuer") or issuer),
            authorization_endpoint=data["authorization_endpoint"],
            token_endpoint=data["token_endpoint"],
            registration_endpoint=data.get("registration_endpoint") or None,
            scopes_supported=strings("scopes_supported"),
            auth_methods=strings("token_endpoint_auth_methods_supported"),
            pkce_methods=strings("code_challenge_methods_supported") or [],
            cimd=data.get("client_id_metadata_document_supported") is True,
            iss_supported=data.get("authorization_response_iss_parameter_supported") is True,
            dpop_algs=strings("dpop_signing_alg_values_supported"),
        )


def check_endpoint(issuer: str, key: str, url: str) -> None:
    """Refuse an endpoint that is not a web URL, or plain http under an https issuer.

    The authorization URL is opened in a person's browser (the dashboard, a Slack button,
    the CLI's output), so a ``javascript:``, ``data:`` or ``file:`` URL there runs or reads
    something of the person's; the spec wants every endpoint on https, and an issuer
    reached over https handing out http would expose codes and tokens on the way.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise OAuthError(f"authorization server {issuer}: {key} {url[:80]!r} is not an http(s) URL")
    if urlsplit(issuer).scheme == "https" and parts.scheme != "https":
        raise OAuthError(f"authorization server {issuer}: {key} {url[:80]!r} is not https")


@dataclass
class Discovery:
    """Everything discovery learnt about one protected server."""

    resource: str  # the `resource` parameter (RFC 8707)
    server: AuthServer
    scopes_supported: list[str] | None  # from the Protected Resource Metadata


def origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def canonical(url: str) -> str:
    """The canonical resource URI of a server URL: lower-case scheme and host, no fragment."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/") if parts.path != "/" else ""
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def resource_allowed(server_url: str, resource: str) -> bool:
    """Whether Protected Resource Metadata naming `resource` may speak for `server_url`:
    same origin, and the server's path at or below the resource's (RFC 9728 §3.3)."""
    want, have = urlsplit(canonical(server_url)), urlsplit(canonical(resource))
    if (want.scheme, want.netloc) != (have.scheme, have.netloc):
        return False
    prefix = have.path.rstrip("/")
    return want.path == prefix or want.path.startswith(prefix + "/")


def well_known(base: str, name: str, path_after: bool = True) -> str:
    """``{origin}/.well-known/{name}{path}``, or with `path_after` False
    ``{origin}{path}/.well-known/{name}`` (OpenID Connect's form)."""
    parts = urlsplit(base)
    path = parts.path.rstrip("/")
    where = f"/.well-known/{name}{path}" if path_after else f"{path}/.well-known/{name}"
    return urlunsplit((parts.scheme, parts.netloc, where, "", ""))


async def fetch_json(http: aiohttp.ClientSession, url: str) -> dict[str, Any] | None:
    """A JSON object from `url`, or None when it is not there (4xx, not JSON)."""
    try:
        async with http.get(url, headers={"Accept": "application/json"}) as resp:
            if resp.status != 200:
                return None
            body = await resp.content.read(MAX_METADATA_BYTES + 1)
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        raise OAuthError(f"GET {url}: {connection.cause(exc)}") from None
    if len(body) > MAX_METADATA_BYTES:
        raise OAuthError(f"GET {url}: metadata longer than {MAX_METADATA_BYTES} bytes")
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


async def protected_resource(
    http: aiohttp.ClientSession, server_url: str, metadata_url: str | None
) -> dict[str, Any] | None:
    if metadata_url:
        return await fetch_json(http, metadata_url)
    candidates = [well_known(server_url, "oauth-protected-resource")]
    root = well_known(origin(server_url), "oauth-protected-resource")
    if root not in candidates:
        candidates.append(root)
    for url in candidates:
        if (data := await fetch_json(http, url)) is not None:
            return data
    return None


async def authorization_server(
    http: aiohttp.ClientSession, issuer: str, legacy: bool = False
) -> AuthServer | None:
    """The issuer's metadata; None when it publishes none."""
    if urlsplit(issuer).path.strip("/"):
        candidates = [
            well_known(issuer, "oauth-authorization-server"),
            well_known(issuer, "openid-configuration"),
            well_known(issuer, "openid-configuration", path_after=False),
        ]
    else:
        candidates = [
            well_known(issuer, "oauth-authorization-server"),
            well_known(issuer, "openid-configuration"),
        ]
    for url in candidates:
        data = await fetch_json(http, url)
        if data is None:
            continue
        server = AuthServer.from_metadata(issuer, data)
        if not legacy and server.issuer.rstrip("/") != issuer.rstrip("/"):
            # RFC 8414 §3.3: a document for another issuer is an attack or a mistake
            raise OAuthError(f"{url} describes issuer {server.issuer}, not {issuer}")
        return server
    return None


def fallback_server(base: str) -> AuthServer:
    """The 2025-03-26 default endpoints at the server's origin."""
    return AuthServer(
        issuer=base,
        authorization_endpoint=f"{base}/authorize",
        token_endpoint=f"{base}/token",
        registration_endpoint=f"{base}/register",
        scopes_supported=None,
        auth_methods=None,
        pkce_methods=None,
        cimd=False,
    )


async def discover(http: aiohttp.ClientSession, server_url: str, challenge: Challenge) -> Discovery:
    """Protected Resource Metadata, then the authorization server's; raises OAuthError."""
    prm = await protected_resource(http, server_url, challenge.resource_metadata)
    if prm is None:  # a 2025-03-26 server: its origin is the authorization server
        base = origin(server_url)
        server = await authorization_server(http, base, legacy=True) or fallback_server(base)
        return Discovery(canonical(server_url), server, None)
    resource = prm.get("resource")
    if isinstance(resource, str) and resource:
        if not resource_allowed(server_url, resource):
            raise OAuthError(
                f"the server's protected resource metadata names {resource}, which is not "
                f"{canonical(server_url)}; refusing to log in there"
            )
    else:
        resource = canonical(server_url)
    servers = prm.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
        raise OAuthError("the server's protected resource metadata names no authorization server")
    issuer = servers[0]
    found = await authorization_server(http, issuer)
    if found is None:
        raise OAuthError(f"authorization server {issuer} publishes no metadata")
    supported = prm.get("scopes_supported")
    scopes = [str(s) for s in supported] if isinstance(supported, list) else None
    return Discovery(resource, found, scopes)
