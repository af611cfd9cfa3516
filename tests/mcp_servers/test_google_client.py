"""The shared Google client against the fake API: refresh, saving, errors that name the fix."""

from __future__ import annotations

import json
import stat

import pytest
from bothost.mcp_servers.google.auth import SCOPES, write_private
from bothost.mcp_servers.google.client import GoogleClient
from bothost.mcp_servers.google.errors import AuthRequiredError, GoogleError

from tests.fakes.google_api import FakeGoogle
from tests.helpers import FakeTime


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


def timed_client(fake: FakeGoogle, tmp_path, time: FakeTime) -> GoogleClient:
    token = write_token(fake, tmp_path / "t.json")
    return GoogleClient(
        "gmail", "gmail", "v1", token_file=token, clock=time.clock, sleep=time.sleep
    )


@pytest.mark.parametrize("code", [429, 503, 403])
async def test_a_busy_answers_retry_after_is_waited_then_the_call_succeeds(fake, tmp_path, code):
    time = FakeTime()
    client = timed_client(fake, tmp_path, time)
    fake.busy = [(code, "7"), (code, "3")]
    profile = await client.call(lambda api: api.users().getProfile(userId="me"))
    assert profile["emailAddress"] == "me@example.com"
    assert time.waits == [7.0, 3.0]  # what Google asked for, not a backoff of our own
    assert fake.count("GET", "/profile") == 3


async def test_an_http_date_retry_after_is_read_too(fake, tmp_path):
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    time = FakeTime()
    client = timed_client(fake, tmp_path, time)
    fake.busy = [(429, format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True))]
    await client.call(lambda api: api.users().getProfile(userId="me"))
    assert len(time.waits) == 1 and 10 < time.waits[0] <= 20


async def test_a_retry_after_past_the_deadline_fails_at_once_saying_when(fake, tmp_path):
    time = FakeTime()
    client = timed_client(fake, tmp_path, time)
    fake.busy = [(429, "3600")]
    with pytest.raises(GoogleError) as caught:
        await client.call(lambda api: api.users().getProfile(userId="me"))
    assert time.waits == []
    assert caught.value.status == 429 and caught.value.retry_after == 3600
    assert "retry after 3600 s" in str(caught.value) and "Too many concurrent" in str(caught.value)
    assert fake.count("GET", "/profile") == 1


async def test_retries_stop_after_two_and_a_refusal_is_not_retried(fake, tmp_path):
    time = FakeTime()
    client = timed_client(fake, tmp_path, time)
    fake.busy = [(503, None)] * 3  # no Retry-After: googleapiclient's backoff, bounded
    with pytest.raises(GoogleError, match="503"):
        await client.call(lambda api: api.users().getProfile(userId="me"))
    assert len(time.waits) == 2 and all(0 <= w <= 4 for w in time.waits)
    time.waits.clear()
    with pytest.raises(GoogleError) as caught:  # a 404 is an answer, not "not now"
        await client.call(lambda api: api.users().messages().get(userId="me", id="nope"))
    assert caught.value.status == 404 and time.waits == []


@pytest.mark.parametrize(
    "value", [None, "", "0", "7", " 120 ", "-3", "1.5", "soon", "Wed, 21 Oct 2015 07:28:00 GMT"]
)
def test_the_servers_retry_after_reads_as_the_hosts(value):
    from bothost.mcp_servers.google.errors import retry_after_seconds

    from bothost.platform import retry_after_seconds as hosts

    assert retry_after_seconds(value) == hosts(value)


async def test_a_busy_token_endpoints_retry_after_is_waited_then_the_refresh_succeeds(
    fake, tmp_path
):
    # found last session: the refresh of an expired token went through google-auth's own
    # retrying (3 tries, 1 s then 2 s of time.sleep in the worker, Retry-After unread), and
    # a refresh still refused after it was reported as a revoked token ("run auth")
    time = FakeTime()
    client = timed_client(fake, tmp_path, time)
    fake.token_busy = [(503, "7"), (429, "3")]
    profile = await client.call(lambda api: api.users().getProfile(userId="me"))
    assert profile["emailAddress"] == "me@example.com"
    assert time.waits == [7.0, 3.0]  # what Google asked for, within the call's bound
    assert fake.count("POST", "/token") == 3 and fake.refresh_count == 1


async def test_a_token_endpoint_busy_past_the_deadline_is_not_a_revoked_token(fake, tmp_path):
    time = FakeTime()
    client = timed_client(fake, tmp_path, time)
    fake.token_busy = [(429, "3600")]
    with pytest.raises(GoogleError) as caught:
        await client.call(lambda api: api.users().getProfile(userId="me"))
    assert not isinstance(caught.value, AuthRequiredError), caught.value
    assert caught.value.status == 429 and caught.value.retry_after == 3600
    assert "retry after 3600 s" in str(caught.value)
    assert time.waits == [] and fake.count("POST", "/token") == 1


async def test_a_refresh_after_the_api_rejected_the_token_waits_a_busy_retry_after_too(
    fake, tmp_path
):
    # the client library refreshes by itself when the API answers 401 (AuthorizedHttp)
    time = FakeTime()
    client = timed_client(fake, tmp_path, time)
    await client.call(lambda api: api.users().getProfile(userId="me"))
    fake.expire_access_tokens()
    fake.token_busy = [(503, "5")]
    profile = await client.call(lambda api: api.users().getProfile(userId="me"))
    assert profile["emailAddress"] == "me@example.com"
    assert time.waits == [5.0] and fake.refresh_count == 2
