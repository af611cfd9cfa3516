"""An OAuth-protected Streamable HTTP MCP server on 127.0.0.1, for the OAuth tests.

It is its own authorization server and speaks the real wire formats: Protected Resource
Metadata (RFC 9728), authorization server metadata (RFC 8414), dynamic registration
(RFC 7591), the authorization code grant with PKCE S256 that approves at once (a 302 to the
redirect URI, as a person clicking "allow" would cause), refresh tokens (rotated), 401 with
``WWW-Authenticate`` for a missing or unknown token and 403 ``insufficient_scope`` when a tool
needs more scope. Tests revoke tokens to play expiry and a dead refresh token.

Two extensions, each off until a test turns it on: DPoP (RFC 9449) — with ``dpop_algs`` set
the metadata offers it and the server requires it: a proof on every token request, tokens
bound to the proof's key (``token_type: DPoP``), ``Authorization: DPoP`` with a proof
(``ath``, the bound key) on every MCP request, and with ``dpop_nonce`` / ``mcp_nonce`` set
the token endpoint / MCP endpoint demands that nonce (``use_dpop_nonce``); and the workload-identity jwt-bearer grant (RFC 7523),
taking ``workload_jwt`` as the assertion.

With ``revision`` set to 2026-07-28 the MCP endpoint answers ``server/discover`` and refuses
``initialize`` the way the conformance suite's 2026-07-28 mock does (400, -32602: the
revision's ``_meta`` keys are missing), so a client that takes it for an older server fails
to start. ``token_delay`` makes the token endpoint slow (a loaded authorization server).
With ``idle_close`` set the MCP endpoint drops, unanswered, a request that comes on a
connection idle longer than that: a busy Node server (the suite's mocks, the TypeScript SDK)
whose 5 s keep-alive timer fired before it read the request resets the connection.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
import socket
import struct
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from tests.helpers import serve_app
from tests.mcp.dpop_verify import ProofError, check

TOOLS = [
    {"name": "read_note", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
    {"name": "write_note", "inputSchema": {"type": "object"}},
]
NEEDS = {"read_note": {"read"}, "write_note": {"read", "write"}}
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


class OAuthMcpServer:
    def __init__(self, expires_in: int = 3600) -> None:
        self.expires_in = expires_in
        self.base = ""
        self.codes: dict[str, dict[str, Any]] = {}
        self.access: dict[str, set[str]] = {}
        self.refresh: dict[str, set[str]] = {}
        self.grants: list[str] = []  # grant_type of every token request
        self.authorizations: list[dict[str, str]] = []  # query of every authorization request
        self.bearers: list[str] = []  # every Authorization header /mcp received
        self.token_outage = False  # the token endpoint answers 503 (a passing failure)
        # Retry-After values: each token request takes the first and answers 503 with it
        self.token_busy: list[str] = []
        self.registrations: list[dict[str, Any]] = []  # body of every registration request
        # RFC 9207: the metadata's authorization_response_iss_parameter_supported (None: left
        # out) and the `iss` the redirect carries (None: none)
        self.iss_supported: bool | None = None
        self.redirect_iss: str | None = None
        self.issued: list[str] = []  # access tokens to hand out next, in order (else random)
        self.results: dict[str, str] = {}  # tool -> its result's text (else "<tool> done")
        # DPoP: the metadata's dpop_signing_alg_values_supported (None: no DPoP at all), the
        # nonce each end demands (None: none), each bound token's key thumbprint, and the
        # claims of every proof taken ("where" is "token" or "mcp")
        self.dpop_algs: list[str] | None = None
        self.dpop_nonce: str | None = None
        self.mcp_nonce: str | None = None  # the one the MCP endpoint demands
        self.bound: dict[str, str] = {}
        self.proofs: list[dict[str, Any]] = []
        self.token_proof_headers: list[str | None] = []  # the DPoP header of each token request
        self.proof_refused: list[str] = []  # JSON-RPC method of each MCP request refused so
        self.methods: list[str] = []  # JSON-RPC method of each MCP request taken
        # jwt-bearer: the one assertion taken; every assertion received
        self.workload_jwt: str | None = None
        self.assertions: list[str] = []
        self.revision = "2025-11-25"  # or 2026-07-28: server/discover, no initialize
        self.token_delay = 0.0  # seconds each token request takes to be answered
        self.idle_close: float | None = None  # seconds a connection may idle at /mcp
        self.answered_at: dict[Any, float] = {}  # connection (peer address) -> last answer
        self.dropped = 0  # MCP requests dropped for coming on a connection idle too long
        self.runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/.well-known/oauth-protected-resource/mcp", self.prm)
        app.router.add_get("/.well-known/oauth-authorization-server", self.metadata)
        app.router.add_post("/register", self.register)
        app.router.add_get("/authorize", self.authorize)
        app.router.add_post("/token", self.token)
        app.router.add_post("/mcp", self.mcp)
        self.runner, self.base = await serve_app(app, access_log=None)

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    def revoke_access(self) -> None:
        self.access.clear()

    def revoke_refresh(self) -> None:
        self.refresh.clear()

    # -- authorization server ---------------------------------------------------------

    async def prm(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "resource": self.url,
                "authorization_servers": [self.base],
                "scopes_supported": ["read"],
            }
        )

    async def metadata(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "issuer": self.base,
                "authorization_endpoint": f"{self.base}/authorize",
                "token_endpoint": f"{self.base}/token",
                "registration_endpoint": f"{self.base}/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "scopes_supported": ["read", "write", "offline_access"],
                **({"dpop_signing_alg_values_supported": self.dpop_algs} if self.dpop_algs else {}),
                **(
                    {"authorization_response_iss_parameter_supported": self.iss_supported}
                    if self.iss_supported is not None
                    else {}
                ),
            }
        )

    async def register(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.registrations.append(body)
        client = {"client_id": f"client-{secrets.token_hex(4)}", **body}
        client["token_endpoint_auth_method"] = "none"
        return web.json_response(client, status=201)

    async def authorize(self, request: web.Request) -> web.Response:
        query = dict(request.query)
        self.authorizations.append(query)
        code = secrets.token_urlsafe(16)
        self.codes[code] = query
        answer = {"code": code, "state": query["state"]}
        if self.redirect_iss is not None:
            answer["iss"] = self.redirect_iss
        target = f"{query['redirect_uri']}?{urlencode(answer)}"
        raise web.HTTPFound(target)

    async def token(self, request: web.Request) -> web.Response:
        form = dict(await request.post())
        grant = form.get("grant_type", "")
        self.grants.append(grant)
        if self.token_delay:
            await asyncio.sleep(self.token_delay)  # the slow server is the case under test
        if self.token_outage:
            return web.Response(status=503, text="down for maintenance")
        if self.token_busy:
            headers = {"Retry-After": self.token_busy.pop(0)}
            return web.json_response(
                {"error": "temporarily_unavailable"}, status=503, headers=headers
            )
        jkt = None
        self.token_proof_headers.append(request.headers.get("DPoP"))
        if self.dpop_algs:
            try:
                claims = check(
                    request.headers.get("DPoP"), "POST", f"{self.base}/token", nonce=self.dpop_nonce
                )
            except ProofError as exc:
                return self.dpop_refusal(400, str(exc))
            self.proofs.append({"where": "token", **claims})
            jkt = claims["jkt"]
        if grant == "authorization_code":
            asked = self.codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "").encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=")
            if asked is None or digest.decode() != asked["code_challenge"]:
                return web.json_response({"error": "invalid_grant"}, status=400)
            if form.get("resource") != self.url:
                return web.json_response({"error": "invalid_target"}, status=400)
            scopes = set(asked.get("scope", "").split())
        elif grant == "refresh_token":
            token = form.get("refresh_token", "")
            if self.bound.get(token, jkt) != jkt:  # RFC 9449 §5: bound to the same key
                return web.json_response({"error": "invalid_grant"}, status=400)
            scopes = self.refresh.pop(token, None)  # rotated
            if scopes is None:
                return web.json_response({"error": "invalid_grant"}, status=400)
        elif grant == JWT_BEARER:
            self.assertions.append(form.get("assertion", ""))
            if self.workload_jwt is None or form.get("assertion") != self.workload_jwt:
                return web.json_response({"error": "invalid_grant"}, status=400)
            scopes = set(form.get("scope", "read").split())
        else:
            return web.json_response({"error": "unsupported_grant_type"}, status=400)
        access = self.issued.pop(0) if self.issued else f"at-{secrets.token_hex(12)}"
        refresh = f"rt-{secrets.token_hex(12)}"
        self.access[access] = scopes
        answer: dict[str, Any] = {
            "access_token": access,
            "token_type": "DPoP" if jkt else "Bearer",
            "expires_in": self.expires_in,
            "scope": " ".join(sorted(scopes)),
        }
        if grant != JWT_BEARER:  # a workload asks again with its identity instead
            self.refresh[refresh] = scopes
            answer["refresh_token"] = refresh
        if jkt:
            self.bound[access] = self.bound[refresh] = jkt
        return web.json_response(answer)

    def dpop_refusal(self, status: int, why: str) -> web.Response:
        """A refused proof; RFC 9449 §8 (token endpoint, 400) and §9 (resource, 401)."""
        error = "use_dpop_nonce" if why == "use_dpop_nonce" else "invalid_dpop_proof"
        nonce = self.mcp_nonce if status == 401 else self.dpop_nonce
        headers = {"DPoP-Nonce": nonce} if error == "use_dpop_nonce" and nonce else {}
        if status == 401:
            metadata = f"{self.base}/.well-known/oauth-protected-resource/mcp"
            headers["WWW-Authenticate"] = f'DPoP error="{error}", resource_metadata="{metadata}"'
        return web.json_response(
            {"error": error, "error_description": why}, status=status, headers=headers
        )

    # -- the MCP endpoint -------------------------------------------------------------

    def challenge(self, status: int, scope: str, error: str) -> web.Response:
        metadata = f"{self.base}/.well-known/oauth-protected-resource/mcp"
        scheme = "DPoP" if self.dpop_algs else "Bearer"
        header = f'{scheme} error="{error}", scope="{scope}", resource_metadata="{metadata}"'
        return web.json_response(
            {"error": error}, status=status, headers={"WWW-Authenticate": header}
        )

    async def mcp(self, request: web.Request) -> web.Response:
        peer = request.transport.get_extra_info("peername") if request.transport else None
        now = asyncio.get_running_loop().time()
        idle = now - self.answered_at.get(peer, now)
        if self.idle_close is not None and idle > self.idle_close and request.transport:
            self.dropped += 1
            sock = request.transport.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            request.transport.abort()  # a reset, as Node's with the request still unread
            return web.Response(status=503)  # written nowhere: the connection is gone
        try:
            return await self.answer(request)
        finally:
            self.answered_at[peer] = asyncio.get_running_loop().time()

    async def answer(self, request: web.Request) -> web.Response:
        credential = request.headers.get("Authorization", "")
        self.bearers.append(credential)
        scheme, _, token = credential.partition(" ")
        scopes = self.access.get(token)
        if scopes is None or (scheme == "DPoP") != (token in self.bound):
            return self.challenge(401, "read", "invalid_token")  # RFC 9449 §7.2: not as Bearer
        if scheme == "DPoP":
            try:
                proof = check(
                    request.headers.get("DPoP"),
                    "POST",
                    self.url,
                    token=token,
                    nonce=self.mcp_nonce,
                )
            except ProofError as exc:
                self.proof_refused.append((await request.json()).get("method"))
                return self.dpop_refusal(401, str(exc))
            if proof["jkt"] != self.bound[token]:
                return self.challenge(401, "read", "invalid_token")
            self.proofs.append({"where": "mcp", **proof})
        message = await request.json()
        method, id_ = message.get("method"), message.get("id")
        self.methods.append(method)
        if id_ is None:
            return web.Response(status=202)
        if self.revision == "2026-07-28" and method in ("server/discover", "initialize"):
            return self.discover_or_refuse(method, id_)
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "oauth-notes", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            tool = message["params"]["name"]
            if not NEEDS[tool] <= scopes:
                return self.challenge(403, " ".join(sorted(NEEDS[tool])), "insufficient_scope")
            text = self.results.get(tool, f"{tool} done").format(bearer=credential)
            result = {"content": [{"type": "text", "text": text}]}
        else:
            error = {"code": -32601, "message": "Method not found"}
            return web.json_response({"jsonrpc": "2.0", "id": id_, "error": error})
        return web.json_response({"jsonrpc": "2.0", "id": id_, "result": result})

    def discover_or_refuse(self, method: str, id_: Any) -> web.Response:
        """A 2026-07-28 server's answers to the two ways a client begins."""
        if method == "initialize":
            error = {"code": -32602, "message": "Invalid params: missing _meta keys"}
            return web.json_response({"jsonrpc": "2.0", "id": id_, "error": error}, status=400)
        result = {
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "_meta": {
                "io.modelcontextprotocol/serverInfo": {"name": "oauth-notes", "version": "1"}
            },
        }
        return web.json_response({"jsonrpc": "2.0", "id": id_, "result": result})
