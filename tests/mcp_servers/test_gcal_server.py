"""The gcal server as a subprocess, driven by the official SDK client against the fake API."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta

import pytest
from bothost.mcp_servers.google.auth import SCOPES

from tests.fakes.google_api import ME, FakeGoogle
from tests.helpers import until

ARGV = [sys.executable, "-m", "bothost.mcp_servers.gcal"]
NEW = "event/new_calendar_event"
CHANGED = "event/calendar_event_changed"
CANCELLED = "event/calendar_event_cancelled"
CAPS = "bothost/capabilities"
SOON = datetime.now(UTC).replace(microsecond=0) + timedelta(days=1)


@pytest.fixture
def gcal(mcp_stdio, fake, home):
    token = home / "secrets" / "google-gcal.json"
    token.parent.mkdir(mode=0o700)
    token.write_text(json.dumps(fake.authorized_user(SCOPES["gcal"])))
    env = {
        "GOOGLE_API_ENDPOINT": fake.url,
        "GOOGLE_TOKEN_URI": f"{fake.url}/token",
        "GCAL_POLL_SECONDS": "0.1",
    }

    def start(**extra: str):
        return mcp_stdio(ARGV, env={**env, **extra}, events=[NEW, CHANGED, CANCELLED])

    return start


def synced(home) -> bool:
    path = home / "secrets" / "google-gcal.state.json"
    if not path.exists():
        return False
    return bool(json.loads(path.read_text())["calendars"]["primary"].get("sync_token"))


async def quiet_polls(fake: FakeGoogle, n: int = 3) -> None:
    """Let the watcher look `n` more times (so a duplicate would have had its chance)."""
    seen = fake.count("GET", "/events")
    await until(lambda: fake.count("GET", "/events") >= seen + n)


async def test_changes_are_announced_once_even_across_restarts(gcal, fake, home):
    before = fake.add_event("Standup", SOON)
    async with gcal() as (client, events):
        await until(lambda: synced(home))
        budget = fake.add_event("Budget review", SOON + timedelta(hours=3), location="Room 4")
        [new] = await events.wait_for(NEW)
        fake.change_event(before["id"], summary="Standup (moved)")
        [changed] = await events.wait_for(CHANGED)
        fake.cancel_event(budget["id"])
        [cancelled] = await events.wait_for(CANCELLED)
        await quiet_polls(fake)
        assert [m for m, _ in events.received] == [NEW, CHANGED, CANCELLED]

    assert new["event_id"] == budget["id"] and new["id"] == budget["id"]
    assert new["title"] == "Budget review" and new["location"] == "Room 4"
    assert new["summary"].startswith("New event: Budget review")
    assert new["calendar_id"] == "primary" and new["occurred_at"]
    assert changed["event_id"] == before["id"] and changed["title"] == "Standup (moved)"
    assert changed["id"] != before["id"]  # one id per change, so the host keeps each
    assert cancelled["event_id"] == budget["id"] and cancelled["title"] == "Budget review"

    async with gcal() as (client, events):
        await quiet_polls(fake)
        assert events.received == []
        later = fake.add_event("Retro", SOON + timedelta(days=1))
        [again] = await events.wait_for(NEW)
        assert again["event_id"] == later["id"]
        await quiet_polls(fake)
        assert len(events.received) == 1


async def test_expired_sync_token_resyncs_without_reannouncing(gcal, fake, home):
    keep = fake.add_event("Keep", SOON)
    drop = fake.add_event("Drop", SOON + timedelta(hours=2))
    async with gcal() as (client, events):
        await until(lambda: synced(home))
        fake.invalidate_sync_tokens()
        fake.cancel_event(drop["id"])
        fresh = fake.add_event("Fresh", SOON + timedelta(hours=4))
        await events.wait_for(NEW)
        await events.wait_for(CANCELLED)
        await quiet_polls(fake)
        assert [p["event_id"] for p in events.of(NEW)] == [fresh["id"]]
        assert [p["event_id"] for p in events.of(CANCELLED)] == [drop["id"]]
        assert events.of(CHANGED) == []
        assert all(p["event_id"] != keep["id"] for _, p in events.received)


async def test_tools_list_create_update_delete_and_respond(gcal, fake):
    start = SOON.replace(hour=9, minute=0)
    invite = fake.add_event(
        "Planning",
        start,
        description="Agenda: budget",
        attendees=[
            {"email": "ana@corp.com", "organizer": True, "responseStatus": "accepted"},
            {"email": ME, "self": True, "responseStatus": "needsAction"},
        ],
    )
    async with gcal() as (client, _):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["list_events"].meta[CAPS]["untrusted"] is True
        assert tools["delete_event"].meta[CAPS]["destructive"] is True
        assert tools["create_event"].meta[CAPS]["egress"] == "chosen"

        calendars = (await client.call_tool("list_calendars", {})).structured_content
        assert calendars["calendars"][0] == {
            "id": ME,
            "title": ME,
            "primary": True,
            "access_role": "owner",
            "time_zone": "Europe/Zurich",
        }

        created = await client.call_tool(
            "create_event",
            {
                "title": "Lunch with Sam",
                "start": start.strftime("%Y-%m-%dT12:00"),
                "time_zone": "Europe/Zurich",
                "attendees": ["sam@corp.com"],
            },
        )
        assert not created.is_error, created.content[0].text
        lunch = created.structured_content
        assert lunch["time_zone"] == "Europe/Zurich" and lunch["end"].endswith("T13:00:00")
        assert lunch["attendees"] == [{"email": "sam@corp.com", "response": "needsAction"}]

        day = start.strftime("%Y-%m-%d")
        listed = await client.call_tool(
            "list_events", {"time_min": f"{day}T00:00:00Z", "time_max": f"{day}T23:59:59Z"}
        )
        titles = [e["title"] for e in listed.structured_content["events"]]
        assert "Planning" in titles
        found = await client.call_tool("list_events", {"query": "budget"})
        assert [e["id"] for e in found.structured_content["events"]] == [invite["id"]]

        patched = await client.call_tool(
            "update_event", {"event_id": invite["id"], "title": "Planning (Q1)"}
        )
        assert patched.structured_content["title"] == "Planning (Q1)"
        assert fake.count("PATCH", f"/events/{invite['id']}") == 1
        stored = fake.events[ME][invite["id"]]
        assert stored["description"] == "Agenda: budget" and len(stored["attendees"]) == 2

        moved = await client.call_tool(
            "update_event",
            {
                "event_id": lunch["id"],
                "start": start.strftime("%Y-%m-%dT15:30"),
                "time_zone": "Europe/Zurich",
            },
        )
        assert moved.structured_content["end"].endswith("T16:30:00")  # length kept

        answer = await client.call_tool(
            "respond_to_event", {"event_id": invite["id"], "response": "tentative"}
        )
        assert answer.structured_content["response"] == "tentative"
        assert stored["attendees"][1] == {"email": ME, "self": True, "responseStatus": "tentative"}
        assert stored["attendees"][0]["responseStatus"] == "accepted"
        not_invited = await client.call_tool(
            "respond_to_event", {"event_id": lunch["id"], "response": "accepted"}
        )
        assert not_invited.is_error and "guest list" in not_invited.content[0].text

        gone = await client.call_tool("delete_event", {"event_id": lunch["id"]})
        assert gone.structured_content["deleted"] is True
        event = await client.call_tool("get_event", {"event_id": lunch["id"]})
        assert event.structured_content["status"] == "cancelled"
        again = await client.call_tool("delete_event", {"event_id": lunch["id"]})
        assert again.is_error and "410" in again.content[0].text

        bad = await client.call_tool("create_event", {"title": "x", "start": "tomorrow"})
        assert bad.is_error and "ISO" in bad.content[0].text


async def test_missing_token_names_the_auth_command(gcal, home):
    async with gcal(GOOGLE_TOKEN_FILE=str(home / "nowhere.json")) as (client, _):
        result = await client.call_tool("list_calendars", {})
        assert result.is_error and "bothost-mcp-gcal auth" in result.content[0].text


async def test_changes_made_while_stopped_are_announced_at_start(gcal, fake, home):
    moved = fake.add_event("Offsite", SOON)
    async with gcal() as (client, events):
        await until(lambda: synced(home))
    fake.change_event(moved["id"], location="Lakeside")
    added = fake.add_event("Dinner", SOON + timedelta(hours=8))
    async with gcal() as (client, events):
        [changed] = await events.wait_for(CHANGED)
        [new] = await events.wait_for(NEW)
        await quiet_polls(fake)
        assert len(events.received) == 2
    assert changed["event_id"] == moved["id"] and changed["location"] == "Lakeside"
    assert new["event_id"] == added["id"]
