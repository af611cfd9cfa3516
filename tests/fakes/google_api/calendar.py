"""The fake's Calendar API v3: calendar list, events, and incremental sync with tokens.

Every change bumps a sequence number; a sync token is the sequence it was issued at, and
an incremental listing returns the events changed since (cancelled ones stripped to their
identity, as Google does). `invalidate_sync_tokens` makes every earlier token answer 410
`fullSyncRequired`.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from aiohttp import web

from .wire import ME, bad_request, google_error, not_found, rfc3339


class CalendarFake:
    """Mixin of `FakeGoogle`: Calendar state, routes and test controls."""

    _ids: itertools.count

    def _init_calendar(self) -> None:
        self.calendars = [
            {"id": ME, "summary": ME, "primary": True, "timeZone": "Europe/Zurich"},
            {"id": "team@group.calendar.google.com", "summary": "Team", "timeZone": "UTC"},
        ]
        self.events: dict[str, dict[str, dict[str, Any]]] = {c["id"]: {} for c in self.calendars}
        self.seq = 0
        self.min_sync_seq = 0

    def _calendar_routes(self, app: web.Application) -> None:
        cal = "/calendar/v3"
        app.router.add_get(cal + "/users/me/calendarList", self._calendar_list)
        app.router.add_get(cal + "/calendars/{cal}/events", self._list_events)
        app.router.add_post(cal + "/calendars/{cal}/events", self._insert_event)
        app.router.add_get(cal + "/calendars/{cal}/events/{id}", self._get_event)
        app.router.add_patch(cal + "/calendars/{cal}/events/{id}", self._patch_event)
        app.router.add_delete(cal + "/calendars/{cal}/events/{id}", self._delete_event)

    # -- Calendar: test controls ---------------------------------------------------------

    def _calendar(self, name: str) -> str | None:
        if name == "primary":
            return ME
        return name if name in self.events else None

    def add_event(
        self, summary: str, start: datetime, *, calendar: str = "primary", **fields
    ) -> dict:
        """An event appears on a calendar (created elsewhere); returns it."""
        end = fields.pop("end", start + timedelta(hours=1))
        body = {
            "summary": summary,
            "start": {"dateTime": rfc3339(start)},
            "end": {"dateTime": rfc3339(end)},
            **fields,
        }
        return self._create(self._calendar(calendar) or calendar, body)

    def change_event(self, event_id: str, *, calendar: str = "primary", **fields) -> dict:
        event = self.events[self._calendar(calendar)][event_id]
        event.update(fields)
        self._touch(event)
        return event

    def cancel_event(self, event_id: str, *, calendar: str = "primary") -> None:
        event = self.events[self._calendar(calendar)][event_id]
        event["status"] = "cancelled"
        self._touch(event)

    def invalidate_sync_tokens(self) -> None:
        """Google may drop sync tokens at any time (410 Gone)."""
        self.min_sync_seq = self.seq + 1

    def _touch(self, event: dict[str, Any]) -> None:
        self.seq += 1
        event["_seq"] = self.seq
        event["etag"] = f'"{self.seq}"'
        event["updated"] = rfc3339(datetime.now(UTC) + timedelta(microseconds=self.seq))
        event["sequence"] = event.get("sequence", -1) + 1

    def _create(self, calendar_id: str, body: dict[str, Any]) -> dict[str, Any]:
        event_id = f"ev{next(self._ids)}"
        event = {
            "kind": "calendar#event",
            "id": event_id,
            "status": "confirmed",
            "htmlLink": f"https://calendar.example.com/event?eid={event_id}",
            "created": rfc3339(datetime.now(UTC)),
            "creator": {"email": ME, "self": True},
            "organizer": {"email": calendar_id, "self": calendar_id == ME},
            "iCalUID": f"{event_id}@google.com",
            **body,
        }
        self._touch(event)
        self.events[calendar_id][event_id] = event
        return event

    # -- Calendar: handlers --------------------------------------------------------------

    async def _calendar_list(self, request: web.Request) -> web.Response:
        items = [
            {"kind": "calendar#calendarListEntry", "accessRole": "owner", **c}
            for c in self.calendars
        ]
        return web.json_response({"kind": "calendar#calendarList", "items": items})

    async def _list_events(self, request: web.Request) -> web.Response:
        calendar_id = self._calendar(request.match_info["cal"])
        if calendar_id is None:
            return not_found()
        q = request.query
        if "syncToken" in q:
            clash = {"timeMin", "timeMax", "q", "orderBy", "updatedMin", "iCalUID"} & set(q)
            if clash:
                return bad_request(f"syncToken cannot be used with {sorted(clash)}")
            token_seq = _sync_seq(q["syncToken"], calendar_id)
            if token_seq is None or token_seq < self.min_sync_seq:
                return google_error(
                    410,
                    "Sync token is no longer valid, a full sync is required.",
                    "fullSyncRequired",
                    "GONE",
                )
            found = [e for e in self.events[calendar_id].values() if e["_seq"] > token_seq]
        else:
            show_deleted = q.get("showDeleted") == "true"
            found = [
                e
                for e in self.events[calendar_id].values()
                if (show_deleted or e["status"] != "cancelled")
                and _in_range(e, q)
                and _has_text(e, q)
            ]
        if q.get("orderBy") == "startTime":
            if q.get("singleEvents") != "true":
                return bad_request(
                    "The requested ordering is not available for the particular query."
                )
            found.sort(key=_start_of)
        else:
            found.sort(key=lambda e: e["_seq"])
        offset = int(q.get("pageToken", "0"))
        size = min(int(q.get("maxResults", "250")), 2500)
        page = found[offset : offset + size]
        body: dict[str, Any] = {
            "kind": "calendar#events",
            "summary": calendar_id,
            "timeZone": q.get("timeZone", "Europe/Zurich"),
            "items": [_public(e) for e in page],
        }
        if offset + size < len(found):
            body["nextPageToken"] = str(offset + size)
        else:
            body["nextSyncToken"] = f"sync:{calendar_id}:{self.seq}"
        return web.json_response(body)

    async def _get_event(self, request: web.Request) -> web.Response:
        calendar_id = self._calendar(request.match_info["cal"])
        event = (self.events.get(calendar_id) or {}).get(request.match_info["id"])
        return web.json_response(_public(event)) if event else not_found()

    async def _insert_event(self, request: web.Request) -> web.Response:
        calendar_id = self._calendar(request.match_info["cal"])
        if calendar_id is None:
            return not_found()
        body = await request.json()
        if "start" not in body or "end" not in body:
            return bad_request("Missing end time." if "start" in body else "Missing start time.")
        return web.json_response(_public(self._create(calendar_id, body)))

    async def _patch_event(self, request: web.Request) -> web.Response:
        calendar_id = self._calendar(request.match_info["cal"])
        event = (self.events.get(calendar_id) or {}).get(request.match_info["id"])
        if event is None:
            return not_found()
        event.update({k: v for k, v in (await request.json()).items() if k not in ("id", "kind")})
        self._touch(event)
        return web.json_response(_public(event))

    async def _delete_event(self, request: web.Request) -> web.Response:
        calendar_id = self._calendar(request.match_info["cal"])
        event = (self.events.get(calendar_id) or {}).get(request.match_info["id"])
        if event is None:
            return not_found()
        if event["status"] == "cancelled":
            return google_error(410, "Resource has been deleted", "deleted", "GONE")
        event["status"] = "cancelled"
        self._touch(event)
        return web.Response(status=204)


def _public(event: dict[str, Any]) -> dict[str, Any]:
    if event["status"] == "cancelled":
        # Deleted events come back from incremental sync stripped to their identity.
        return {
            "kind": "calendar#event",
            "etag": event["etag"],
            "id": event["id"],
            "status": "cancelled",
        }
    return {k: v for k, v in event.items() if not k.startswith("_")}


def _sync_seq(token: str, calendar_id: str) -> int | None:
    kind, _, rest = token.partition(":")
    cal, _, seq = rest.rpartition(":")
    if kind != "sync" or cal != calendar_id or not seq.isdigit():
        return None
    return int(seq)


def _moment(value: dict[str, str]) -> datetime:
    if "dateTime" in value:
        moment = datetime.fromisoformat(value["dateTime"])
        if moment.tzinfo is None:  # a local time is read in the event's own zone
            moment = moment.replace(tzinfo=ZoneInfo(value.get("timeZone", "UTC")))
        return moment
    return datetime.fromisoformat(value["date"]).replace(tzinfo=UTC)


def _start_of(event: dict[str, Any]) -> datetime:
    return _moment(event["start"])


def _in_range(event: dict[str, Any], q) -> bool:
    if "timeMin" in q and _moment(event["end"]) <= datetime.fromisoformat(q["timeMin"]):
        return False
    if "timeMax" in q and _moment(event["start"]) >= datetime.fromisoformat(q["timeMax"]):
        return False
    return True


def _has_text(event: dict[str, Any], q) -> bool:
    text = q.get("q", "").lower()
    fields = (event.get("summary", ""), event.get("description", ""), event.get("location", ""))
    return not text or any(text in str(f).lower() for f in fields)
