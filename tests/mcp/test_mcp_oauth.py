"""Remote servers behind OAuth: login, calls, refresh, a dead refresh token, step-up scope.

Against tests/mcp/oauth_server.py, a protected MCP server on 127.0.0.1 that is its own
authorization server and approves logins at once; the person's browser is played by an
aiohttp client that follows the authorization URL's redirect to our callback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import time
from urllib.parse import parse_qsl, urlsplit

import aiohttp
import pytest
from mcp_helpers import wait_for
from oauth_server import OAuthMcpServer

from bothost.config import McpServerConfig
from bothost.mcp import commands
from bothost.mcp.manager import McpManager
from bothost.mcp.oauth import login as oauth_login
from bothost.mcp.oauth.auth import OAuth
from bothost.mcp.oauth.tokens import MemoryTokens, load_record
from bothost.mcp.serverlog import log_path
from bothost.store import Store, core_migrations
from tests.helpers import FakeTime, each

WAIT = 10.0


@pytest.fixture
async def protected():
    server = OAuthMcpServer()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
def store(home):
    store = Store(home / "bothost.db", core_migrations())
    yield store
    store.close()


@pytest.fixture
async def events():
    return []


@pytest.fixture
async def make_manager(home, store, protected, events):
    managers = []

    async def on_event(source, type, payload):
        events.append((source, type, payload))

    async def make():
        servers = {"notes": McpServerConfig(url=protected.url)}
        manager = McpManager(servers, store, home, on_events=each(on_event))
        managers.append(manager)
        await manager.start(wait=WAIT)
        return manager

    yield make
    for manager in managers:
        await manager.stop()


async def visit(url: str) -> None:
    """The person's browser: open the URL and follow the redirects to the callback."""
    async with aiohttp.ClientSession() as http, http.get(url) as resp:
        assert resp.status == 200, await resp.text()


async def log_in(store, home, protected) -> str:
    manager = McpManager({"notes": McpServerConfig(url=protected.url)}, store, home)
    shown: list[str] = []
    tasks: list[asyncio.Task] = []

    def say(url: str) -> None:
        shown.append(url)
        tasks.append(asyncio.create_task(visit(url)))

    outcome = await commands.login(manager, "notes", None, say)
    await asyncio.gather(*tasks)
    assert shown and shown[0].startswith(f"{protected.base}/authorize?")
    return outcome


class FollowRedirect:
    redirect_uri = "http://127.0.0.1:9/oauth/callback"  # read from the Location, never visited

    async def authorize(self, url: str) -> dict[str, str]:
        async with aiohttp.ClientSession() as http, http.get(url, allow_redirects=False) as resp:
            return dict(parse_qsl(urlsplit(resp.headers["Location"]).query))


async def test_login_then_calls_use_the_stored_token(store, home, protected, make_manager):
    assert await log_in(store, home, protected) == "logged in to notes"
    record = await store.run(lambda db: load_record(db, "notes"))
    assert record["access_token"] in protected.access
    assert "offline_access" in protected.authorizations[0]["scope"].split()
    assert protected.authorizations[0]["code_challenge_method"] == "S256"
    manager = await make_manager()
    assert manager.status()[0].state == "ready"
    result = await manager.call_tool("notes", "read_note", {})
    assert (result.is_error, result.text) == (False, "read_note done")
    logged = log_path(home, "notes").read_text()
    assert record["access_token"] not in logged and record["refresh_token"] not in logged


async def test_expired_token_is_refreshed_on_401_and_before_expiry(
    store, home, protected, make_manager
):
    await log_in(store, home, protected)
    manager = await make_manager()
    protected.revoke_access()  # the server no longer takes the token: as when it expired
    result = await manager.call_tool("notes", "read_note", {})
    assert (result.is_error, result.text) == (False, "read_note done")
    assert protected.grants == ["authorization_code", "refresh_token"]

    # a token about to expire is renewed before it is sent, so the server sees no 401
    oauth = manager.runners["notes"].session.transport.auth
    oauth.record["expires_at"] = time.time() + 1
    sent = len(protected.bearers)
    assert not (await manager.call_tool("notes", "read_note", {})).is_error
    assert protected.grants == ["authorization_code", "refresh_token", "refresh_token"]
    assert len(protected.bearers) == sent + 1


async def test_an_authorization_server_outage_is_not_a_dead_login(
    store, home, protected, make_manager
):
    await log_in(store, home, protected)
    manager = await make_manager()
    protected.revoke_access()
    protected.token_outage = True
    failed = await manager.call_tool("notes", "read_note", {})
    assert failed.is_error and "503" in failed.text
    assert manager.status()[0].state == "ready"
    protected.token_outage = False
    result = await manager.call_tool("notes", "read_note", {})
    assert (result.is_error, result.text) == (False, "read_note done")


async def test_a_busy_token_endpoints_retry_after_is_waited_within_the_refresh_deadline(
    store, home, protected, make_manager
):
    await log_in(store, home, protected)
    manager = await make_manager()
    oauth = manager.runners["notes"].session.transport.auth
    fake = FakeTime()
    oauth.clock, oauth.sleep = fake.clock, fake.sleep
    protected.revoke_access()
    protected.token_busy = ["7"]
    result = await manager.call_tool("notes", "read_note", {})
    assert (result.is_error, result.text) == (False, "read_note done")
    assert fake.waits == [7.0]  # as asked, not a backoff of our own
    assert protected.grants == ["authorization_code", "refresh_token", "refresh_token"]


async def test_a_retry_after_past_the_deadline_fails_now_and_holds_back_refreshes(
    store, home, protected, make_manager
):
    await log_in(store, home, protected)
    manager = await make_manager()
    oauth = manager.runners["notes"].session.transport.auth
    fake = FakeTime()
    oauth.clock, oauth.sleep = fake.clock, fake.sleep
    protected.revoke_access()
    protected.token_busy = ["120"]
    failed = await manager.call_tool("notes", "read_note", {})
    assert failed.is_error and "retry after 120 s" in failed.text, failed.text
    assert fake.waits == []
    asked = len(protected.grants)
    again = await manager.call_tool("notes", "read_note", {})  # the server is not asked
    assert again.is_error and "wait before the next refresh" in again.text, again.text
    assert len(protected.grants) == asked
    fake.now += 121
    result = await manager.call_tool("notes", "read_note", {})
    assert (result.is_error, result.text) == (False, "read_note done")
    assert manager.status()[0].state == "ready"


async def test_dead_refresh_token_means_login_needed_and_one_admin_notice(
    store, home, protected, make_manager, events
):
    await log_in(store, home, protected)
    manager = await make_manager()
    protected.revoke_access()
    protected.revoke_refresh()
    first = await manager.call_tool("notes", "read_note", {})
    assert first.is_error and "bothost mcp login notes" in first.text
    await wait_for(lambda: manager.status()[0].state == "login_needed")
    assert manager.tools("notes") == []  # its tools are unavailable meanwhile
    again = await manager.call_tool("notes", "read_note", {})
    assert again.is_error and "needs a login" in again.text
    await wait_for(lambda: len(events) >= 1)
    await asyncio.sleep(0)  # give a second notice, if one were coming, its turn
    assert [(source, kind) for source, kind, _ in events] == [("notes", "bothost/login_needed")]
    assert "bothost mcp login notes" in events[0][2]["summary"]

    servers = {"notes": McpServerConfig(url=protected.url)}
    listing = await commands.list_servers(McpManager(servers, store, home, publish_status=False))
    assert [s.state for s in listing] == ["login_needed"]
    record = await store.run(lambda db: load_record(db, "notes"))
    assert record["login_needed"] and not record["access_token"]


async def test_step_up_logs_in_again_with_the_scope_the_server_names(protected):
    oauth = OAuth(
        "notes",
        protected.url,
        MemoryTokens(),
        log=logging.getLogger("test"),
        authorizer=FollowRedirect(),
    )
    from bothost.mcp.http import HttpTransport
    from bothost.mcp.session import ClientSession

    session = ClientSession(
        HttpTransport(protected.url, log=logging.getLogger("test"), auth=oauth),
        name="notes",
        log=logging.getLogger("test"),
    )
    try:
        await session.start()
        result = await session.call_tool("write_note", {})
    finally:
        await session.close()
    assert (result.is_error, result.text) == (False, "write_note done")
    scopes = [set(a.get("scope", "").split()) for a in protected.authorizations]
    assert scopes == [{"read", "offline_access"}, {"read", "write", "offline_access"}]


async def test_step_up_in_the_host_asks_a_person_to_log_in_for_that_scope(
    store, home, protected, make_manager, monkeypatch
):
    monkeypatch.setattr("bothost.mcp.runner.LOGIN_POLL", 0.05)
    await log_in(store, home, protected)
    manager = await make_manager()
    result = await manager.call_tool("notes", "write_note", {})
    assert result.is_error
    await wait_for(lambda: manager.status()[0].state == "login_needed")
    assert "scope read write" in (manager.status()[0].error or "")

    await log_in(store, home, protected)  # the person logs in again…
    assert {"read", "write"} <= set(protected.authorizations[-1]["scope"].split())
    await wait_for(lambda: manager.status()[0].state == "ready")  # …and the host sees it
    result = await manager.call_tool("notes", "write_note", {})
    assert (result.is_error, result.text) == (False, "write_note done")


def test_host_callback_takes_each_state_once(store):
    store.call(lambda db: oauth_login.begin(db, "s1", "notes"))
    assert store.call(lambda db: oauth_login.collect(db, "s1")) is None
    assert store.call(lambda db: oauth_login.arrive(db, {"state": "s1", "code": "c"}))
    assert not store.call(lambda db: oauth_login.arrive(db, {"state": "s1", "code": "x"}))
    assert not store.call(lambda db: oauth_login.arrive(db, {"state": "nope", "code": "c"}))
    assert store.call(lambda db: oauth_login.collect(db, "s1")) == {"state": "s1", "code": "c"}


async def test_mcp_login_prints_the_url_at_once_and_logout_forgets(home, tmp_path, protected):
    config = tmp_path / "bothost.yaml"
    config.write_text(json.dumps({"mcp": {"servers": {"notes": {"url": protected.url}}}}))
    env = {**os.environ, "BOTHOST_NO_BROWSER": "1"}
    base = [sys.executable, "-m", "bothost", "--home", str(home), "--config", str(config)]
    process = await asyncio.create_subprocess_exec(
        *base, "mcp", "login", "notes", stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert process.stdout is not None
    try:
        async with asyncio.timeout(30):
            while not (line := (await process.stdout.readline()).decode()).startswith("http"):
                assert line, (await process.stderr.read()).decode()  # type: ignore[union-attr]
            await visit(line.strip())
            rest, err = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err.decode()
    assert "logged in to notes" in rest.decode()

    store = Store(home / "bothost.db", core_migrations())
    try:
        assert store.call(lambda db: load_record(db, "notes"))["access_token"]
        manager = McpManager({"notes": McpServerConfig(url=protected.url)}, store, home)
        await commands.logout(manager, "notes")  # what `bothost mcp logout notes` runs
        assert store.call(lambda db: load_record(db, "notes")) is None
    finally:
        store.close()


async def test_a_remote_server_added_at_run_time_says_how_to_log_in(store, home, protected):
    manager = McpManager({}, store, home, publish_status=False)
    await manager.start()
    try:
        await manager.add_server("notes", McpServerConfig(url=protected.url), origin="register_mcp")
        await wait_for(lambda: manager.status()[0].state == "login_needed")
        assert "bothost mcp login notes" in (manager.status()[0].error or "")
        assert manager.tools("notes") == []
    finally:
        await manager.stop()


async def test_the_dashboard_begins_a_login_that_comes_back_to_the_host(
    home, protected, monkeypatch
):
    from tests.helpers import make_host

    monkeypatch.setattr("bothost.mcp.runner.LOGIN_POLL", 0.05)
    config = {
        "platforms": {"web": {"port": 0}},
        "mcp": {"servers": {"notes": {"url": protected.url}}},
        "tick": {"enabled": False},
    }
    host = make_host(home, config)
    await host.start(tick=False)

    def state() -> str:
        return next(s.state for s in host.mcp.status() if s.name == "notes")

    try:
        await wait_for(lambda: state() == "login_needed")
        base = f"http://127.0.0.1:{host.http.port}"
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/healthz") as resp:
                health = (await resp.json())["mcp"]["notes"]
            assert (health["ok"], health["state"]) == (False, "login_needed")
            async with http.post(f"{base}/api/mcp/notes/login", json={}) as resp:
                assert resp.status == 200, await resp.text()
                url = (await resp.json())["url"]
            authorization = dict(parse_qsl(urlsplit(url).query))
            assert authorization["redirect_uri"] == f"{base}/oauth/callback"
            async with http.get(url) as resp:  # the browser: approved, back to the host
                assert resp.status == 200 and "Logged in" in await resp.text()
            async with http.get(f"{base}/oauth/callback?{urlsplit(url).query}") as resp:
                assert resp.status == 400  # a state is taken once
        await wait_for(lambda: state() == "ready")
        result = await host.mcp.call_tool("notes", "read_note", {})
        assert (result.is_error, result.text) == (False, "read_note done")
    finally:
        await host.stop()


def test_login_to_a_server_nobody_answers_is_a_failure_not_a_usage_error(home, tmp_path):
    # found from outside, following README's `bothost mcp add tracker --url … && bothost mcp
    # login tracker`: the unreachable server exited 2, which `bothost --help` keeps for config,
    # plugin and usage errors ("1 failure (model, database, network, …)")
    from tests.helpers import free_port, run_bothost

    config = tmp_path / "bothost.yaml"
    url = f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens there
    config.write_text(json.dumps({"mcp": {"servers": {"tracker": {"url": url}}}}))
    result = run_bothost("mcp", "login", "tracker", home=home, config=config)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bothost: tracker: "), result.stderr
