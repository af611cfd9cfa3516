"""DPoP-bound tokens (RFC 9449, SEP-1932) and the workload-identity jwt-bearer grant (SEP-1933).

Against tests/mcp/oauth_server.py with its extensions on: an authorization server that
offers DPoP requires a proof at its token endpoint and binds the token to the proof's key,
and the MCP endpoint then takes that token only as ``Authorization: DPoP`` with a fresh
proof (checked by tests/mcp/dpop_verify.py, written from the RFC apart from our client).
Calls go through the real Streamable HTTP transport and session.
"""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import parse_qsl, urlsplit

import aiohttp
import pytest
from oauth_server import JWT_BEARER, OAuthMcpServer

from bothost import redact
from bothost.config import McpAuthConfig, McpServerConfig
from bothost.mcp import commands, http, revision
from bothost.mcp.http import HttpTransport
from bothost.mcp.manager import McpManager
from bothost.mcp.oauth.auth import OAuth
from bothost.mcp.oauth.errors import OAuthError
from bothost.mcp.oauth.tokens import MemoryTokens, load_record
from bothost.mcp.serverlog import log_path
from bothost.mcp.session import ClientSession
from bothost.store import Store, core_migrations

WAIT = 10.0
PROBE = 0.3  # seconds: server/discover's bound, made short so a slow login outlasts it
IDLE = 0.5  # seconds the MCP server keeps an idle connection, made short likewise
log = logging.getLogger("test.dpop")


@pytest.fixture
async def protected():
    server = OAuthMcpServer()
    await server.start()
    yield server
    await server.stop()


class FollowRedirect:
    redirect_uri = "http://127.0.0.1:9/oauth/callback"  # read from the Location, never visited

    async def authorize(self, url: str) -> dict[str, str]:
        async with aiohttp.ClientSession() as http, http.get(url, allow_redirects=False) as resp:
            return dict(parse_qsl(urlsplit(resp.headers["Location"]).query))


async def calls(protected: OAuthMcpServer, oauth: OAuth, *tools: str) -> list[str]:
    """Connect through the transport with `oauth` (logging in on the first 401), call each."""
    session = ClientSession(
        HttpTransport(protected.url, log=log, auth=oauth), name="notes", log=log
    )
    texts = []
    try:
        async with asyncio.timeout(WAIT):
            await session.start()
            for tool in tools:
                result = await session.call_tool(tool, {})
                assert not result.is_error, result.text
                texts.append(result.text)
    finally:
        await session.close()
    return texts


def oauth(protected: OAuthMcpServer, tokens: MemoryTokens | None = None, **config) -> OAuth:
    return OAuth(
        "notes",
        protected.url,
        tokens or MemoryTokens(),
        config=McpAuthConfig(**config),
        log=log,
        authorizer=FollowRedirect(),
    )


async def test_a_server_offering_dpop_gets_a_bound_token_and_a_fresh_proof_per_request(protected):
    protected.dpop_algs = ["ES256"]
    tokens = MemoryTokens()
    assert await calls(protected, oauth(protected, tokens), "read_note", "read_note")
    record = tokens.records["notes"]
    assert record["token_type"] == "DPoP"
    assert record["access_token"] in protected.bound  # bound by the token request's proof
    used = [c for c in protected.bearers if c]
    assert used and all(c == f"DPoP {record['access_token']}" for c in used)
    at_mcp = [p for p in protected.proofs if p["where"] == "mcp"]
    assert len(at_mcp) == len(used)
    assert len({p["jti"] for p in protected.proofs}) == len(protected.proofs)  # never reused
    assert {p["jkt"] for p in protected.proofs} == {protected.bound[record["access_token"]]}


async def test_the_servers_nonce_is_used_at_both_ends(protected):
    protected.dpop_algs = ["ES256"]
    protected.dpop_nonce = "nonce-of-the-token-endpoint"
    protected.mcp_nonce = "nonce-of-the-mcp-endpoint"
    assert await calls(protected, oauth(protected), "read_note") == ["read_note done"]
    # the first token request had no nonce and was refused; the one taken carried it
    assert protected.token_proof_headers[0] is not None and len(protected.grants) == 2
    assert {p["where"] for p in protected.proofs} == {"token", "mcp"}
    assert {p["where"]: p["nonce"] for p in protected.proofs} == {
        "token": "nonce-of-the-token-endpoint",
        "mcp": "nonce-of-the-mcp-endpoint",
    }
    # the MCP request refused for its nonce is the one sent again, not given up
    assert len(protected.proof_refused) == 1
    assert protected.methods[0] == protected.proof_refused[0]


async def test_a_login_slower_than_the_discover_probe_keeps_a_2026_server_at_2026(
    protected, monkeypatch
):
    # The conformance suite's auth/dpop-nonce on a loaded CI machine: the login that
    # server/discover's 401 began outlasted the probe's bound, so the probe was taken for an
    # older server's silence; the login half done was dropped, and initialize (which a
    # 2026-07-28 server refuses) logged in all over again, past the suite's 30 s per client,
    # before any request reached the MCP server with the token. A 401 is an answer: the
    # time spent logging in is not the server's silence.
    monkeypatch.setattr(revision, "DISCOVER_TIMEOUT", PROBE)
    protected.revision = "2026-07-28"
    protected.dpop_algs = ["ES256"]
    protected.dpop_nonce, protected.mcp_nonce = "as-nonce", "rs-nonce"
    protected.token_delay = PROBE  # two token requests (the nonce's): twice the probe's bound
    assert await calls(protected, oauth(protected), "read_note") == ["read_note done"]
    assert len(protected.authorizations) == 1  # one login, not one per revision tried
    assert protected.methods == ["server/discover", "subscriptions/listen", "tools/call"]


async def test_the_request_after_a_long_login_goes_on_a_fresh_connection(protected, monkeypatch):
    # The same scenario's other failure on a loaded machine: the login outlasted the Node
    # server's 5 s keep-alive, the request sent again after it went on the connection the
    # busy server was closing, the reset looked like a server gone, and no request reached
    # the MCP server with the token. A connection idle past KEEPALIVE is not used again.
    monkeypatch.setattr(http, "KEEPALIVE", IDLE / 10)
    protected.idle_close = IDLE
    protected.revision = "2026-07-28"
    protected.dpop_algs = ["ES256"]
    protected.dpop_nonce, protected.mcp_nonce = "as-nonce", "rs-nonce"
    protected.token_delay = IDLE  # the login idles the MCP connection twice that
    assert await calls(protected, oauth(protected), "read_note") == ["read_note done"]
    assert protected.dropped == 0


async def test_a_refresh_proves_the_same_key(protected):
    protected.dpop_algs = ["ES256"]
    tokens = MemoryTokens()
    auth = oauth(protected, tokens)
    await auth.login()
    first = tokens.records["notes"]
    protected.revoke_access()  # the next call's 401 refreshes
    assert await calls(protected, auth, "read_note") == ["read_note done"]
    assert protected.grants == ["authorization_code", "refresh_token"]
    assert tokens.records["notes"]["dpop_key"] == first["dpop_key"]
    assert len({p["jkt"] for p in protected.proofs}) == 1


async def test_without_dpop_in_the_metadata_tokens_stay_bearer(protected):
    tokens = MemoryTokens()
    assert await calls(protected, oauth(protected, tokens), "read_note") == ["read_note done"]
    assert protected.token_proof_headers == [None]
    assert tokens.records["notes"]["token_type"] == "Bearer"
    assert not tokens.records["notes"]["dpop_key"]


async def test_dpop_true_sends_proofs_and_a_bearer_answer_is_used_as_bearer(protected):
    tokens = MemoryTokens()  # the server knows no DPoP: it ignores the proof (RFC 9449 §5)
    assert await calls(protected, oauth(protected, tokens, dpop=True), "read_note")
    assert protected.token_proof_headers[0] is not None
    assert tokens.records["notes"]["token_type"] == "Bearer"
    assert protected.bearers[-1].startswith("Bearer ")


async def test_dpop_false_sends_no_proof_even_when_offered(protected):
    protected.dpop_algs = ["ES256"]  # and required: this server refuses the request
    with pytest.raises(OAuthError, match="invalid_dpop_proof"):
        await oauth(protected, dpop=False).login()
    assert protected.token_proof_headers == [None]


async def test_a_server_wanting_another_algorithm_is_told_plainly(protected):
    protected.dpop_algs = ["RS256"]
    with pytest.raises(OAuthError, match="RS256 only; bothost signs with ES256"):
        await oauth(protected, dpop=True).login()
    assert protected.grants == []


async def test_the_dpop_key_is_stored_with_the_login_and_never_logged(home, protected):
    protected.dpop_algs = ["ES256"]
    store = Store(home / "bothost.db", core_migrations())
    servers = {"notes": McpServerConfig(url=protected.url)}
    manager = McpManager(servers, store, home)
    try:
        opened: list[asyncio.Task] = []

        def say(url: str) -> None:  # the person's browser, redirected to the CLI's listener
            opened.append(asyncio.create_task(visit(url)))

        async with asyncio.timeout(WAIT):
            await commands.login(manager, "notes", None, say)
            await asyncio.gather(*opened)
        record = await store.run(lambda db: load_record(db, "notes"))
        secret = record["dpop_key"]["d"]
        assert record["token_type"] == "DPoP"
        assert redact.redact(f"key {secret}") == "key ***"
        await manager.start(wait=WAIT)
        result = await manager.call_tool("notes", "read_note", {})
        assert (result.is_error, result.text) == (False, "read_note done")
        assert protected.bearers[-1].startswith("DPoP ")
        logged = log_path(home, "notes").read_text()
        assert secret not in logged and record["access_token"] not in logged
    finally:
        await manager.stop()
        store.close()


async def visit(url: str) -> None:
    async with aiohttp.ClientSession() as http, http.get(url) as resp:
        assert resp.status == 200, await resp.text()


@pytest.mark.parametrize("dpop_offered", [False, True])
async def test_a_workload_logs_in_with_its_identity_file_read_afresh(
    home, tmp_path, protected, dpop_offered
):
    protected.dpop_algs = ["ES256"] if dpop_offered else None
    identity = tmp_path / "token"
    identity.write_text("eyJ.workload-one.sig\n")  # as a platform writes it, newline and all
    protected.workload_jwt = "eyJ.workload-one.sig"
    auth = McpAuthConfig(grant="jwt_bearer", client_id="workload", assertion_file=str(identity))
    store = Store(home / "bothost.db", core_migrations())
    manager = McpManager({"notes": McpServerConfig(url=protected.url, auth=auth)}, store, home)
    try:
        await manager.start(wait=WAIT)  # nobody logs in: the identity is the grant
        assert manager.status()[0].state == "ready"
        assert (await manager.call_tool("notes", "read_note", {})).text == "read_note done"
        # the platform rotates the file; the token expires: the new identity is used
        identity.write_text("eyJ.workload-two.sig")
        protected.workload_jwt = "eyJ.workload-two.sig"
        protected.revoke_access()
        assert (await manager.call_tool("notes", "read_note", {})).text == "read_note done"
    finally:
        await manager.stop()
        store.close()
    assert protected.grants == [JWT_BEARER, JWT_BEARER]
    assert protected.assertions == ["eyJ.workload-one.sig", "eyJ.workload-two.sig"]
    assert protected.bearers[-1].startswith("DPoP " if dpop_offered else "Bearer ")
    assert redact.redact("sent eyJ.workload-two.sig") == "sent ***"  # a credential, never logged


def test_config_show_masks_the_assertion_but_not_the_files_path():
    auth = {"grant": "jwt_bearer", "assertion": "eyJ.x.y", "assertion_file": "/run/token"}
    masked = redact.mask_config({"auth": auth})["auth"]
    assert masked == {"grant": "jwt_bearer", "assertion": "***", "assertion_file": "/run/token"}


async def test_a_refused_identity_is_one_request_and_no_other_grant(protected):
    protected.workload_jwt = "eyJ.the-right-one.sig"
    with pytest.raises(OAuthError, match="invalid_grant"):
        await oauth(protected, grant="jwt_bearer", assertion="eyJ.a-stale-one.sig").login()
    assert protected.grants == [JWT_BEARER]  # no retry, no authorization code instead
    assert protected.authorizations == [] and protected.registrations == []


async def test_a_missing_identity_file_is_named_before_any_token_request(tmp_path, protected):
    missing = tmp_path / "no-such-token"
    with pytest.raises(OAuthError, match=f"auth.assertion_file {missing}: No such file"):
        await oauth(protected, grant="jwt_bearer", assertion_file=str(missing)).login()
    assert protected.grants == []
