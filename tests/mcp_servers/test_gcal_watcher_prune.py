"""The calendar watcher forgets events long past, and never announces them, by its clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from mcp_servers.gcal.watcher import PAST_HORIZON, CalendarWatcher
from mcp_servers.google.state import StateFile

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


class Listing:
    """Stands in for GoogleClient: `call` answers events().list with the current items."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.token = 0

    async def call(self, build: Any) -> dict[str, Any]:
        listing = self

        class Events:
            def list(self, **query: Any) -> dict[str, Any]:
                listing.token += 1
                return {"items": list(listing.items), "nextSyncToken": f"t{listing.token}"}

        class Api:
            def events(self) -> Events:
                return Events()

        return build(Api())


def event(event_id: str, end: datetime, updated: str = "u1", **extra: Any) -> dict[str, Any]:
    start = end - timedelta(hours=1)
    return {
        "id": event_id,
        "summary": event_id,
        "updated": updated,
        "start": {"dateTime": start.isoformat()},
        "end": {"dateTime": end.isoformat()},
        **extra,
    }


async def test_events_ended_before_the_horizon_are_forgotten_and_never_reannounced(tmp_path):
    clock = [NOW]
    listing, sent = Listing(), []

    async def notify(method: str, payload: dict[str, Any]) -> int:
        sent.append((method, payload["event_id"]))
        return 1

    state = StateFile(tmp_path / "state.json")
    watcher = CalendarWatcher(listing, state, ["primary"], clock=lambda: clock[0])  # type: ignore[arg-type]
    old = event("old", NOW - PAST_HORIZON - timedelta(hours=1))
    recent = event("recent", NOW - timedelta(hours=2))
    weekly = event("weekly", NOW - timedelta(days=400), recurrence=["RRULE:FREQ=WEEKLY"])
    listing.items = [old, recent, weekly]
    await watcher.poll(notify)  # the first look learns, prunes what is long past
    known = state.load()["calendars"]["primary"]["known"]
    assert set(known) == {"recent", "weekly"}  # a recurring series may still be running

    clock[0] = NOW + PAST_HORIZON + timedelta(hours=1)  # "recent" is long past now too
    listing.items = [old | {"updated": "u2"}, recent, weekly]
    await watcher.poll(notify)
    known = state.load()["calendars"]["primary"]["known"]
    assert set(known) == {"weekly"}
    listing.items = [old | {"updated": "u3"}, recent | {"updated": "u2"}, weekly]
    await watcher.poll(notify)  # edits to long-past events are housekeeping, not news
    assert sent == []

    fresh = event("fresh", clock[0] + timedelta(days=1))
    listing.items = [old, recent, weekly, fresh]
    await watcher.poll(notify)
    assert sent == [("event/new_calendar_event", "fresh")]
