"""The grants nobody has to log in for: the token comes from what the config holds.

- ``client_credentials`` (SEP-1046): the client's own secret or private_key_jwt.
- ``cross_app_access`` (SEP-990): the organisation IdP's ID token, exchanged there for an
  ID-JAG (RFC 8693), which the server's authorization server takes as a jwt-bearer grant.
- ``jwt_bearer`` (SEP-1933, workload identity federation): a JWT the platform issues to
  this workload (a Kubernetes service account token, a cloud's identity token) is the
  grant itself (RFC 7523 §2.1). It is read at each token request — from
  ``auth.assertion_file`` afresh, since platforms rotate that file, or from
  ``auth.assertion`` — and a refusal is final: no retry, no other grant.

Each returns the token endpoint's answer and the client it authenticated as (kept for
refreshes). `prover` adds DPoP proofs to the token request (:mod:`.dpop`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import aiohttp

from bothost import redact
from bothost.config import McpAuthConfig
from bothost.mcp.oauth import flow
from bothost.mcp.oauth.discovery import Discovery
from bothost.mcp.oauth.dpop import Prover
from bothost.mcp.oauth.errors import OAuthError

MAX_ASSERTION_BYTES = 64 * 1024  # a JWT is a few KB; anything larger is the wrong file
Answer = tuple[dict[str, Any], flow.Client]


def scoped(form: dict[str, str], scopes: list[str]) -> dict[str, str]:
    """``form`` with the scopes asked for, if any (RFC 6749 §3.3: space-separated)."""
    return {**form, "scope": " ".join(scopes)} if scopes else form


async def client_credentials(
    http: aiohttp.ClientSession,
    config: McpAuthConfig,
    found_at: Discovery,
    scopes: list[str],
    prover: Prover | None,
) -> Answer:
    server = found_at.server
    if not config.client_id:
        raise OAuthError("auth.grant client_credentials needs auth.client_id")
    if config.private_key:
        method = "private_key_jwt"
    elif config.client_secret:
        method = flow.auth_method(server, True)
    else:
        raise OAuthError("client_credentials needs auth.client_secret or auth.private_key")
    client = flow.Client(
        config.client_id,
        config.client_secret,
        method,
        private_key=config.private_key,
        signing_algorithm=config.signing_algorithm,
    )
    form = {"grant_type": "client_credentials", "resource": found_at.resource}
    answer = await flow.token_request(http, server, client, scoped(form, scopes), prover=prover)
    return answer, client


async def cross_app_access(
    http: aiohttp.ClientSession,
    config: McpAuthConfig,
    found_at: Discovery,
    scopes: list[str],
    prover: Prover | None,
) -> Answer:
    """SEP-990: trade the IdP's ID token for an ID-JAG at the IdP (RFC 8693), then the
    ID-JAG for an access token at the server's authorization server (RFC 7523)."""
    server = found_at.server
    needed = ("client_id", "idp_token_endpoint", "idp_client_id", "id_token")
    if missing := [k for k in needed if not getattr(config, k)]:
        raise OAuthError(f"auth.grant cross_app_access needs auth.{', auth.'.join(missing)}")
    assert config.client_id and config.idp_token_endpoint and config.idp_client_id
    assert config.id_token
    exchange = {
        "grant_type": flow.TOKEN_EXCHANGE,
        "subject_token": config.id_token,
        "subject_token_type": flow.ID_TOKEN_TYPE,
        "requested_token_type": flow.ID_JAG_TYPE,
        "audience": server.issuer,
        "resource": found_at.resource,
    }
    idp = flow.Client(
        config.idp_client_id,
        config.idp_client_secret,
        "client_secret_post" if config.idp_client_secret else "none",
    )
    idp_server = dataclasses.replace(server, token_endpoint=config.idp_token_endpoint)
    jag = await flow.token_request(http, idp_server, idp, scoped(exchange, scopes), bearer=False)
    secret = config.client_secret
    client = flow.Client(config.client_id, secret, flow.auth_method(server, bool(secret)))
    form = {"grant_type": flow.JWT_BEARER_GRANT, "assertion": jag["access_token"]}
    answer = await flow.token_request(http, server, client, scoped(form, scopes), prover=prover)
    return answer, client


async def jwt_bearer(
    http: aiohttp.ClientSession,
    config: McpAuthConfig,
    found_at: Discovery,
    scopes: list[str],
    prover: Prover | None,
) -> Answer:
    """SEP-1933: the workload's identity JWT as an RFC 7523 authorization grant."""
    server = found_at.server
    secret = config.client_secret
    # client authentication is optional for this grant (RFC 7523 §3.1): a client_id from
    # config is sent (and its secret, as the metadata says), else the assertion alone
    client = flow.Client(config.client_id or "", secret, flow.auth_method(server, bool(secret)))
    form = {
        "grant_type": flow.JWT_BEARER_GRANT,
        "assertion": assertion(config),
        "resource": found_at.resource,
    }
    answer = await flow.token_request(http, server, client, scoped(form, scopes), prover=prover)
    return answer, client


def assertion(config: McpAuthConfig) -> str:
    """The workload identity JWT: ``auth.assertion_file`` read now, else ``auth.assertion``."""
    if config.assertion_file:
        path = Path(config.assertion_file).expanduser()
        try:
            with path.open("rb") as file:
                data = file.read(MAX_ASSERTION_BYTES + 1)
        except OSError as exc:
            raise OAuthError(
                f"auth.assertion_file {path}: {exc.strerror or type(exc).__name__}"
            ) from None
        if len(data) > MAX_ASSERTION_BYTES:
            raise OAuthError(f"auth.assertion_file {path}: longer than a JWT can be")
        text = data.decode("utf-8", "replace").strip()
        if not text:
            raise OAuthError(f"auth.assertion_file {path} is empty")
        redact.remember([text])  # a credential of ours the config does not hold
        return text
    if config.assertion:
        return config.assertion.strip()
    raise OAuthError("auth.grant jwt_bearer needs auth.assertion_file or auth.assertion")
