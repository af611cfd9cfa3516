"""Calendar changes as notifications, from Calendar's incremental sync (sync tokens).

Per watched calendar the state holds the last `nextSyncToken` and the events already known
(id → updated time, title, start), so a change can be told from a new event and a
cancellation can still be described after Google strips it to `{id, status}`. The first
sync only learns what exists: events that were there before the server ever ran are not
news. Later runs ask for changes since the token and announce

- `event/new_calendar_event` for an event not known before,
- `event/calendar_event_changed` for a known event whose `updated` moved,
- `event/calendar_event_cancelled` for a known event that came back cancelled.

Google may expire a token at any time (410 Gone): the watcher then lists everything again
and compares with what it knows, announcing only real differences, never the whole
calendar again.

An event that ended more than `PAST_HORIZON` ago is no news whatever happens to it (an edit
to last month's meeting is housekeeping), so the state forgets it: `known` would otherwise
grow with every event that ever passed, and be read and written whole on every poll. A
recurring series is kept however old its first occurrence: it may still be running.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from ..google.client import GoogleClient
from ..google.errors import GoogleError
from ..google.state import StateFile
from ..kit import Notify, Outbox

logger = logging.getLogger(__name__)

NEW = "event/new_calendar_event"
CHANGED = "event/calendar_event_changed"
CANCELLED = "event/calendar_event_cancelled"
PAGE_SIZE = 250  # Google's default page; the maximum (2500) makes single answers slow
# How long after its end an event can still be news (moved, cancelled, minutes taken): a
# week covers a long weekend away from the chat; older ones are forgotten and not announced.
PAST_HORIZON = timedelta(days=7)


class CalendarWatcher:
    """Watches the given calendars; `poll(notify)` is the kit watcher's body."""

    def __init__(
        self,
        client: GoogleClient,
        state: StateFile,
        calendars: list[str],
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.client = client
        self.state = state
        self.calendars = calendars
        self.clock = clock

    async def poll(self, notify: Notify) -> int:
        """One look at every watched calendar; returns how many changes were announced."""
        state = self.state.load()
        outbox = Outbox(notify)
        for calendar_id in self.calendars:
            entry = state.setdefault("calendars", {}).setdefault(calendar_id, {})
            await self._sync(calendar_id, entry, state, outbox)
        return outbox.sent

    async def _sync(self, calendar_id: str, entry: dict, state: dict, outbox: Outbox) -> None:
        token = entry.get("sync_token")
        if token:
            try:
                items, next_token = await self._list(calendar_id, token)
            except GoogleError as error:
                if error.status != 410:
                    raise
                logger.warning("sync token for %s expired; full resync", calendar_id)
                entry.pop("sync_token", None)
                return await self._sync(calendar_id, entry, state, outbox)
            return await self._apply(calendar_id, entry, state, items, next_token, outbox)
        items, next_token = await self._list(calendar_id, None)
        if "known" not in entry:  # the very first look: learn, announce nothing
            horizon = self.clock() - PAST_HORIZON
            entry["known"] = {
                e["id"]: memo
                for e in items
                if e.get("status") != "cancelled" and not _long_past(memo := _memo(e), horizon)
            }
            entry["sync_token"] = next_token
            self.state.save(state)
            logger.info("calendar %s: %d events known", calendar_id, len(entry["known"]))
            return
        # A resync: whatever we knew that is absent now was cancelled meanwhile.
        present = {e["id"] for e in items}
        gone = [{"id": i, "status": "cancelled"} for i in entry["known"] if i not in present]
        return await self._apply(calendar_id, entry, state, items + gone, next_token, outbox)

    async def _apply(self, calendar_id, entry, state, items, next_token, outbox: Outbox) -> None:
        known: dict[str, dict[str, Any]] = entry.setdefault("known", {})
        now = self.clock()  # one reading per look: it dates what Google left undated too
        horizon = now - PAST_HORIZON
        for event in items:
            memo = _memo(event)
            if _long_past(memo, horizon):  # no news, and nothing to remember
                known.pop(event["id"], None)
                continue
            method, payload = _classify(calendar_id, event, known.get(event["id"]), now)
            if method and not await outbox.send(method, payload):
                return  # nobody heard it: keep the old token, retry later
            if event.get("status") == "cancelled":
                known.pop(event["id"], None)
            else:
                known[event["id"]] = memo
            if method:
                self.state.save(state)  # announced: a restart must not announce it again
        for event_id in [i for i, memo in known.items() if _long_past(memo, horizon)]:
            del known[event_id]
        entry["sync_token"] = next_token
        self.state.save(state)

    async def _list(self, calendar_id: str, sync_token: str | None) -> tuple[list[dict], str]:
        """Every page of a full (sync_token None) or incremental listing, and the next token."""
        items: list[dict[str, Any]] = []
        page_token: str | None = None
        while True:
            response = await self._page(calendar_id, sync_token, page_token)
            items.extend(response.get("items", []))
            page_token = response.get("nextPageToken")
            if not page_token:
                return items, response["nextSyncToken"]

    async def _page(
        self, calendar_id: str, sync_token: str | None, page_token: str | None
    ) -> dict[str, Any]:
        return await self.client.call(
            lambda api: api.events().list(
                calendarId=calendar_id,
                syncToken=sync_token,
                pageToken=page_token,
                maxResults=PAGE_SIZE,
                # Deleted events only matter in incremental answers (to see them go).
                showDeleted=bool(sync_token),
            )
        )


def _memo(event: dict[str, Any]) -> dict[str, Any]:
    """What we remember of an event: enough to detect a change and describe a cancellation."""
    start, end = event.get("start") or {}, event.get("end") or {}
    return {
        "updated": event.get("updated"),
        "title": event.get("summary", ""),
        "start": start.get("dateTime") or start.get("date"),
        # a series' end is its first occurrence's: None keeps it (see _long_past)
        "end": None if event.get("recurrence") else end.get("dateTime") or end.get("date"),
    }


def _long_past(memo: dict[str, Any], horizon: datetime) -> bool:
    """Whether the event ended before `horizon`; False when its end is unknown (a series, a
    cancellation stripped to its id, state from before ends were kept) or unreadable."""
    end = memo.get("end")
    if not isinstance(end, str):
        return False
    try:
        ended = datetime.fromisoformat(end)
    except ValueError:
        return False
    if ended.tzinfo is None:  # an all-day event's date: its (exclusive) end, taken as UTC
        ended = ended.replace(tzinfo=UTC)
    return ended < horizon


def _classify(
    calendar_id: str, event: dict, memo: dict | None, now: datetime
) -> tuple[str | None, dict]:
    if event.get("status") == "cancelled":
        if memo is None:
            return None, {}  # never announced, nothing to take back
        return CANCELLED, _payload(calendar_id, event, memo, CANCELLED, now)
    if memo is None:
        return NEW, _payload(calendar_id, event, None, NEW, now)
    if memo.get("updated") != event.get("updated"):
        return CHANGED, _payload(calendar_id, event, memo, CHANGED, now)
    return None, {}


def _payload(
    calendar_id: str, event: dict, memo: dict | None, method: str, now: datetime
) -> dict[str, Any]:
    """DESIGN's payload convention: `id` is unique per occurrence (one per change). An
    event Google sent without `updated` (a cancellation stripped to its id, one gone at a
    resync) occurred `now`, the watcher's clock reading."""
    start = event.get("start") or {}
    end = event.get("end") or {}
    title = event.get("summary") or (memo or {}).get("title") or "(untitled)"
    when = start.get("dateTime") or start.get("date") or (memo or {}).get("start") or ""
    event_id = event["id"]
    updated = event.get("updated") or now.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if method == NEW:
        occurrence, summary = event_id, f"New event: {title} ({when})"
    elif method == CHANGED:
        occurrence, summary = f"{event_id}@{updated}", f"Event changed: {title} ({when})"
    else:
        occurrence, summary = f"{event_id}@cancelled", f"Event cancelled: {title} ({when})"
    payload = {
        "id": occurrence,
        "summary": summary,
        "severity": "info",
        "occurred_at": updated,
        "url": event.get("htmlLink"),
        "event_id": event_id,
        "calendar_id": calendar_id,
        "title": title,
        "start": when,
        "end": end.get("dateTime") or end.get("date"),
        "location": event.get("location"),
        "organizer": (event.get("organizer") or {}).get("email"),
        "status": event.get("status", "confirmed"),
    }
    return {k: v for k, v in payload.items() if v is not None}
