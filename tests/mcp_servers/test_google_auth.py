"""`bothost-mcp-<server> auth` against the fake OAuth endpoints; the test plays the browser."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from urllib.parse import parse_qs, urlparse

import aiohttp
import pytest
from bothost.mcp_servers.google.auth import SCOPES, SUCCESS_MESSAGE
from bothost.mcp_servers.google.client import GoogleClient

from tests.fakes.google_api import FakeGoogle

WAIT_SECONDS = 15.0


@pytest.fixture
async def fake():
    google = FakeGoogle()
    await google.start()
    yield google
    await google.close()


async def run_auth(server: str, *args: str, env: dict[str, str]):
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        f"bothost.mcp_servers.{server}",
        "auth",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **env},
    )


async def printed_url(proc, prefix: str) -> str:
    async with asyncio.timeout(WAIT_SECONDS):
        while line := (await proc.stdout.readline()).decode():
            if line.startswith(prefix):
                return line.strip()
    raise AssertionError(f"no URL printed; stderr: {(await proc.stderr.read()).decode()}")


@pytest.mark.parametrize("server", ["gmail", "gcal"])
async def test_auth_stores_a_working_token(server, fake, home, tmp_path, monkeypatch):
    secrets = tmp_path / "client_secret.json"
    secrets.write_text(json.dumps(fake.client_secrets()))
    env = {"OAUTHLIB_INSECURE_TRANSPORT": "1", "BOTHOST_HOME": str(home)}
    env.pop("GOOGLE_TOKEN_FILE", None)
    proc = await run_auth(server, "--client-secrets", str(secrets), env=env)
    try:
        url = await printed_url(proc, f"{fake.url}/o/oauth2/auth")
        asked = parse_qs(urlparse(url).query)
        assert asked["scope"] == [" ".join(SCOPES[server])]
        assert asked["redirect_uri"][0].startswith("http://localhost:")
        async with aiohttp.ClientSession() as browser, browser.get(url) as page:
            assert page.status == 200
            assert SUCCESS_MESSAGE in await page.text()
        async with asyncio.timeout(WAIT_SECONDS):
            stdout, stderr = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, stderr.decode()
    token_file = home / "secrets" / f"google-{server}.json"
    assert f"Token saved to {token_file}" in stdout.decode()
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    saved = json.loads(token_file.read_text())
    assert saved["refresh_token"] in fake.refresh_tokens
    assert sorted(saved["scopes"]) == sorted(SCOPES[server])

    # The stored token works for the server (and refreshes through the token endpoint).
    monkeypatch.setenv("GOOGLE_API_ENDPOINT", fake.url)
    monkeypatch.setenv("GOOGLE_TOKEN_URI", f"{fake.url}/token")
    fake.expire_access_tokens()
    api, version = ("gmail", "v1") if server == "gmail" else ("calendar", "v3")
    client = GoogleClient(server, api, version, token_file=token_file)
    if server == "gmail":
        profile = await client.call(lambda a: a.users().getProfile(userId="me"))
        assert profile["emailAddress"] == "me@example.com"
    else:
        listing = await client.call(lambda a: a.calendarList().list())
        assert listing["items"]
    assert fake.refresh_count == 1


async def test_auth_without_client_secrets_explains_what_is_missing(home):
    env = {"BOTHOST_HOME": str(home)}
    proc = await run_auth("gmail", env={**env, "GOOGLE_CLIENT_SECRETS": ""})
    async with asyncio.timeout(WAIT_SECONDS):
        _, stderr = await proc.communicate()
    assert proc.returncode == 2
    assert "--client-secrets" in stderr.decode() and "GOOGLE_CLIENT_SECRETS" in stderr.decode()
