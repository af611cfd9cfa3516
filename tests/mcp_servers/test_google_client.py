"""The shared Google client against the fake API: refresh, saving, errors that name the fix."""

from __future__ import annotations

import json
import stat

import pytest
from bothost.mcp_servers.google.auth import SCOPES, write_private
from bothost.mcp_servers.google.client import GoogleClient
from bothost.mcp_servers.google.errors import AuthRequiredError, GoogleError

from tests.fakes.google_api import FakeGoogle


@pytest.fixture
async def fake(monkeypatch):
    google = FakeGoogle()
    url = await google.start()
    monkeypatch.setenv("GOOGLE_API_ENDPOINT", url)
    monkeypatch.setenv("GOOGLE_TOKEN_URI", f"{url}/token")
    yield google
    await google.close()


def write_token(fake: FakeGoogle, path, server="gmail"):
    path.write_text(json.dumps(fake.authorized_user(SCOPES[server])))
    return path


async def test_expired_token_is_refreshed_and_saved(fake, tmp_path):
    token = write_token(fake, tmp_path / "google-gmail.json")
    client = GoogleClient("gmail", "gmail", "v1", token_file=token)
    labels = await client.call(lambda api: api.users().labels().list(userId="me"))
    assert "INBOX" in [label["id"] for label in labels["labels"]]
    saved = json.loads(token.read_text())
    assert saved["token"].startswith("access-") and saved["refresh_token"]
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    assert fake.refresh_count == 1
    # A second client (a restart) uses the saved token without refreshing again.
    again = GoogleClient("gmail", "gmail", "v1", token_file=token)
    await again.call(lambda api: api.users().getProfile(userId="me"))
    assert fake.refresh_count == 1


async def test_token_rejected_by_the_api_is_refreshed_once(fake, tmp_path):
    token = write_token(fake, tmp_path / "t.json")
    client = GoogleClient("gmail", "gmail", "v1", token_file=token)
    await client.call(lambda api: api.users().getProfile(userId="me"))
    fake.expire_access_tokens()
    profile = await client.call(lambda api: api.users().getProfile(userId="me"))
    assert profile["emailAddress"] == "me@example.com"
    assert fake.refresh_count == 2
    assert json.loads(token.read_text())["token"] in fake.access_tokens


async def test_missing_token_names_the_auth_command(fake, tmp_path):
    client = GoogleClient("gcal", "calendar", "v3", token_file=tmp_path / "absent.json")
    with pytest.raises(AuthRequiredError, match="bothost-mcp-gcal auth"):
        await client.call(lambda api: api.calendarList().list())


async def test_revoked_token_names_the_auth_command(fake, tmp_path):
    token = write_token(fake, tmp_path / "t.json", "gcal")
    fake.revoke_all()
    client = GoogleClient("gcal", "calendar", "v3", token_file=token)
    with pytest.raises(AuthRequiredError, match="bothost-mcp-gcal auth"):
        await client.call(lambda api: api.calendarList().list())


async def test_http_errors_carry_status_and_google_message(fake, tmp_path):
    token = write_token(fake, tmp_path / "t.json", "gcal")
    client = GoogleClient("gcal", "calendar", "v3", token_file=token)
    with pytest.raises(GoogleError) as caught:
        await client.call(lambda api: api.events().get(calendarId="primary", eventId="nope"))
    assert caught.value.status == 404 and caught.value.reason == "notFound"
    assert "not found" in str(caught.value)


def test_token_files_are_private_in_private_directories(tmp_path):
    path = tmp_path / "home" / "secrets" / "google-gmail.json"
    write_private(path, "{}")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.parent.parent.stat().st_mode) == 0o700
