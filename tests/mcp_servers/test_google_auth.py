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
from bothost.mcp_servers.google.errors import AuthRequiredError

from tests.fakes.google_api import FakeGoogle

WAIT_SECONDS = 15.0


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


async def authorize(server: str, fake: FakeGoogle, secrets, env: dict[str, str]) -> dict:
    """Run `auth` to completion, answering the consent page like a browser would.

    Returns the query of the authorization URL the command printed.
    """
    proc = await run_auth(server, "--client-secrets", str(secrets), env=env)
    try:
        url = await printed_url(proc, f"{fake.url}/o/oauth2/auth")
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
    assert "Token saved to " in stdout.decode()
    return parse_qs(urlparse(url).query)


@pytest.fixture
def secrets(fake, tmp_path):
    path = tmp_path / "client_secret.json"
    path.write_text(json.dumps(fake.client_secrets()))
    return path


@pytest.mark.parametrize("server", ["gmail", "gcal"])
async def test_auth_stores_a_working_token(server, fake, home, secrets, monkeypatch):
    monkeypatch.delenv("GOOGLE_TOKEN_FILE", raising=False)
    env = {"OAUTHLIB_INSECURE_TRANSPORT": "1", "BOTHOST_HOME": str(home)}
    asked = await authorize(server, fake, secrets, env)
    assert asked["scope"] == [" ".join(sorted(SCOPES[server]))]
    assert asked["redirect_uri"][0].startswith("http://localhost:")
    token_file = home / "secrets" / f"google-{server}.json"
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


async def test_one_token_file_can_serve_both_servers(fake, home, secrets, monkeypatch):
    shared = home / "google.json"
    env = {"OAUTHLIB_INSECURE_TRANSPORT": "1", "GOOGLE_TOKEN_FILE": str(shared)}
    await authorize("gmail", fake, secrets, env)
    asked = await authorize("gcal", fake, secrets, env)
    assert set(asked["scope"][0].split()) == set(SCOPES["gmail"]) | set(SCOPES["gcal"])
    monkeypatch.setenv("GOOGLE_API_ENDPOINT", fake.url)
    monkeypatch.setenv("GOOGLE_TOKEN_URI", f"{fake.url}/token")
    gmail = GoogleClient("gmail", "gmail", "v1", token_file=shared)
    await gmail.call(lambda a: a.users().labels().list(userId="me"))
    gcal = GoogleClient("gcal", "calendar", "v3", token_file=shared)
    await gcal.call(lambda a: a.calendarList().list())


async def test_token_for_the_other_server_names_the_auth_command(fake, tmp_path, monkeypatch):
    token = tmp_path / "gcal-only.json"
    token.write_text(json.dumps(fake.authorized_user(SCOPES["gcal"])))
    monkeypatch.setenv("GOOGLE_API_ENDPOINT", fake.url)
    monkeypatch.setenv("GOOGLE_TOKEN_URI", f"{fake.url}/token")
    client = GoogleClient("gmail", "gmail", "v1", token_file=token)
    with pytest.raises(AuthRequiredError, match="does not grant.*bothost-mcp-gmail auth"):
        await client.call(lambda a: a.users().labels().list(userId="me"))
