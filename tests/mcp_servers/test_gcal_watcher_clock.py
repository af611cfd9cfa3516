"""The calendar watcher dates what Google leaves undated by its injected clock."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mcp_servers.gcal.watcher import CalendarWatcher
from mcp_servers.google.state import StateFile
from tests.mcp_servers.test_gcal_watcher_prune import NOW, Listing, event


async def test_an_undated_change_takes_the_watchers_clock(tmp_path):
    listing, sent = Listing(), []

    async def notify(method: str, payload: dict[str, Any]) -> int:
        sent.append((method, payload))
        return 1

    state = StateFile(tmp_path / "state.json")
    watcher = CalendarWatcher(listing, state, ["primary"], clock=lambda: NOW)  # type: ignore[arg-type]
    kept = event("kept", NOW + timedelta(days=1))
    listing.items = [kept]
    await watcher.poll(notify)  # the first look learns
    undated = event("undated", NOW + timedelta(days=2))
    del undated["updated"]
    listing.items = [kept, undated, {"id": "kept", "status": "cancelled"}]
    await watcher.poll(notify)
    assert [(m, p["occurred_at"]) for m, p in sent] == [
        ("event/new_calendar_event", "2026-12-04T12:00:00Z"),
        ("event/calendar_event_cancelled", "2026-12-04T12:00:00Z"),
    ]
