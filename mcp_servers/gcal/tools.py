"""The gcal server's tools: calendars and events, read and written, and answering invites.

`register(server, client)` declares each tool with `@server.tool`: its capabilities and
annotations above it, its name, docstring and type hints as its definition. Capabilities
follow DESIGN: what returns events is private and untrusted (anyone can send an
invitation), creating or updating an event may invite addresses the model names (egress
`chosen`), deleting is destructive, and an RSVP only reaches the event's own organizer
(egress `fixed`). Writes are patches: `update_event` sends only the fields given, so a
change of title never resets the attendees someone else added. Invitations go out only
when `send_updates` asks for it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

from ..google.client import GoogleClient
from ..google.errors import GoogleError
from ..kit import Server
from .event import attendee_list, bound, parse_when, shape, time_field, times

READ = {"private": True, "untrusted": True, "egress": "none", "destructive": False}
READ_OWN = {"private": True, "untrusted": False, "egress": "none", "destructive": False}
CREATE = {"private": False, "untrusted": False, "egress": "chosen", "destructive": False}
UPDATE = {"private": True, "untrusted": True, "egress": "chosen", "destructive": False}
DELETE = {"private": False, "untrusted": False, "egress": "fixed", "destructive": True}
RSVP = {"private": False, "untrusted": False, "egress": "fixed", "destructive": False}

READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}
WRITE = {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": True}
REMOVE = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": True,
    "openWorldHint": True,
}
ANSWER = {
    "readOnlyHint": False,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": True,
}
# Every tool answers with a JSON object; declaring that gives clients `structuredContent`.
OBJECT = {"type": "object"}

MAX_LIST_RESULTS = 250
SendUpdates = Literal["all", "externalOnly", "none"]
Response = Literal["accepted", "declined", "tentative"]


def register(
    server: Server,
    client: GoogleClient,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> None:
    """Declare the calendar tools on `server`, for the calendars `client`'s token can see;
    `clock` is "now" where a tool's range has no start."""

    @server.tool(capabilities=READ_OWN, annotations=READ_ONLY, output_schema=OBJECT)
    async def list_calendars() -> dict[str, Any]:
        """The user's calendars (ids to pass as calendar_id; "primary" is always valid)."""
        response = await client.call(lambda api: api.calendarList().list())
        calendars = [
            {
                "id": c["id"],
                "title": c.get("summaryOverride") or c.get("summary", ""),
                "primary": bool(c.get("primary")),
                "access_role": c.get("accessRole"),
                "time_zone": c.get("timeZone"),
            }
            for c in response.get("items", [])
        ]
        return {"calendars": calendars}

    @server.tool(capabilities=READ, annotations=READ_ONLY, output_schema=OBJECT)
    async def list_events(
        calendar_id: str = "primary",
        time_min: str | None = None,
        time_max: str | None = None,
        query: str | None = None,
        max_results: int = 25,
        time_zone: str | None = None,
        page_token: str | None = None,
    ) -> dict[str, Any]:
        """Events in a time range, in start order; recurring events expanded to occurrences.

        Args:
            calendar_id: Calendar id from list_calendars, or "primary".
            time_min: Earliest end, ISO date or date-time (default: now).
            time_max: Latest start, ISO date or date-time.
            query: Free text matched against title, description, location, attendees.
            max_results: Events per page (1-250).
            time_zone: Zone for the returned times, e.g. Europe/Zurich (default: calendar's).
            page_token: `next_page_token` of the previous page.
        """
        lower = bound(time_min, "time_min") if time_min else clock().isoformat()
        upper = bound(time_max, "time_max") if time_max else None
        response = await client.call(
            lambda api: api.events().list(
                calendarId=calendar_id,
                timeMin=lower,
                timeMax=upper,
                q=query or None,
                maxResults=max(1, min(max_results, MAX_LIST_RESULTS)),
                singleEvents=True,
                orderBy="startTime",
                timeZone=time_zone,
                pageToken=page_token,
            )
        )
        return {
            "calendar_id": calendar_id,
            "time_zone": response.get("timeZone"),
            "events": [shape(e) for e in response.get("items", [])],
            "next_page_token": response.get("nextPageToken"),
        }

    @server.tool(capabilities=READ, annotations=READ_ONLY, output_schema=OBJECT)
    async def get_event(event_id: str, calendar_id: str = "primary") -> dict[str, Any]:
        """One event with its description and attendees' answers.

        Args:
            event_id: The event id.
            calendar_id: Calendar id, or "primary".
        """
        event = await client.call(
            lambda api: api.events().get(calendarId=calendar_id, eventId=event_id)
        )
        return shape(event, calendar_id)

    @server.tool(capabilities=CREATE, annotations=WRITE, output_schema=OBJECT)
    async def create_event(
        title: str,
        start: str,
        end: str | None = None,
        calendar_id: str = "primary",
        time_zone: str | None = None,
        description: str | None = None,
        location: str | None = None,
        attendees: list[str] | None = None,
        send_updates: SendUpdates = "none",
    ) -> dict[str, Any]:
        """Create an event. A bare date (2026-12-03) makes an all-day event.

        Args:
            title: The event's title.
            start: ISO date or date-time, e.g. 2026-12-03T14:00.
            end: ISO date or date-time (default: one hour after start, or the next day).
            calendar_id: Calendar id, or "primary".
            time_zone: IANA zone for times without an offset, e.g. Europe/Zurich.
            description: Notes.
            location: Place or address.
            attendees: Email addresses to invite.
            send_updates: Who gets an invitation email: all, externalOnly or none.
        """
        start_field, end_field = times(start, end, time_zone)
        body: dict[str, Any] = {"summary": title, "start": start_field, "end": end_field}
        if description:
            body["description"] = description
        if location:
            body["location"] = location
        if attendees:
            body["attendees"] = attendee_list(attendees)
        event = await client.call(
            lambda api: api.events().insert(
                calendarId=calendar_id, body=body, sendUpdates=send_updates
            )
        )
        return shape(event, calendar_id)

    @server.tool(capabilities=UPDATE, annotations=WRITE, output_schema=OBJECT)
    async def update_event(
        event_id: str,
        calendar_id: str = "primary",
        title: str | None = None,
        start: str | None = None,
        end: str | None = None,
        time_zone: str | None = None,
        description: str | None = None,
        location: str | None = None,
        attendees: list[str] | None = None,
        send_updates: SendUpdates = "none",
    ) -> dict[str, Any]:
        """Change only the given fields of an event; everything else stays as it is.

        Args:
            event_id: The event id.
            calendar_id: Calendar id, or "primary".
            title: New title.
            start: New start (ISO date or date-time).
            end: New end (ISO date or date-time).
            time_zone: IANA zone for times without an offset.
            description: New notes.
            location: New place.
            attendees: The full new list of invited addresses (replaces the old list).
            send_updates: Who is told about the change: all, externalOnly or none.
        """
        patch: dict[str, Any] = {}
        if title is not None:
            patch["summary"] = title
        if description is not None:
            patch["description"] = description
        if location is not None:
            patch["location"] = location
        if attendees is not None:
            patch["attendees"] = attendee_list(attendees)
        if start and end:
            patch["start"], patch["end"] = times(start, end, time_zone)
        elif start:
            patch.update(await _moved(client, calendar_id, event_id, start, time_zone))
        elif end:
            patch["end"] = time_field(parse_when(end, "end"), time_zone)
        if not patch:
            raise GoogleError("Nothing to change: give at least one field.")
        event = await client.call(
            lambda api: api.events().patch(
                calendarId=calendar_id, eventId=event_id, body=patch, sendUpdates=send_updates
            )
        )
        return shape(event, calendar_id)

    @server.tool(capabilities=DELETE, annotations=REMOVE, output_schema=OBJECT)
    async def delete_event(
        event_id: str, calendar_id: str = "primary", send_updates: SendUpdates = "none"
    ) -> dict[str, Any]:
        """Delete (cancel) an event.

        Args:
            event_id: The event id.
            calendar_id: Calendar id, or "primary".
            send_updates: Who is told: all, externalOnly or none.
        """
        await client.call(
            lambda api: api.events().delete(
                calendarId=calendar_id, eventId=event_id, sendUpdates=send_updates
            )
        )
        return {"deleted": True, "id": event_id, "calendar_id": calendar_id}

    @server.tool(capabilities=RSVP, annotations=ANSWER, output_schema=OBJECT)
    async def respond_to_event(
        event_id: str,
        response: Response,
        calendar_id: str = "primary",
        comment: str | None = None,
    ) -> dict[str, Any]:
        """Answer an invitation: accepted, declined or tentative (the organizer sees it).

        Args:
            event_id: The event id.
            response: accepted, declined or tentative.
            calendar_id: Calendar id, or "primary".
            comment: A short note to the organizer.
        """
        event = await client.call(
            lambda api: api.events().get(calendarId=calendar_id, eventId=event_id)
        )
        attendees = event.get("attendees") or []
        mine = [a for a in attendees if a.get("self")]
        if not mine:
            raise GoogleError(
                "You are not on this event's guest list, so there is nothing to answer."
            )
        mine[0]["responseStatus"] = response
        if comment is not None:
            mine[0]["comment"] = comment
        # The attendee list is patched whole: Calendar has no per-attendee update.
        await client.call(
            lambda api: api.events().patch(
                calendarId=calendar_id, eventId=event_id, body={"attendees": attendees}
            )
        )
        # Only the answer comes back: the event's text is the organizer's, not the model's.
        return {"id": event_id, "calendar_id": calendar_id, "response": response}


async def _moved(
    client: GoogleClient, calendar_id: str, event_id: str, start: str, time_zone: str | None
) -> dict[str, Any]:
    """A new start alone moves the event and keeps its length ("move it to 15:00")."""
    event = await client.call(
        lambda api: api.events().get(calendarId=calendar_id, eventId=event_id)
    )
    old_start = parse_when(_when(event.get("start")), "start")
    old_end = parse_when(_when(event.get("end")), "end")
    new_start = parse_when(start, "start")
    if isinstance(new_start, datetime) != isinstance(old_start, datetime):
        raise GoogleError("Give `end` too when changing between all-day and timed.")
    zone = time_zone or (event.get("start") or {}).get("timeZone")
    new_end = new_start + (old_end - old_start)
    return {"start": time_field(new_start, zone), "end": time_field(new_end, zone)}


def _when(field: dict[str, str] | None) -> str:
    field = field or {}
    return field.get("dateTime") or field.get("date") or ""
