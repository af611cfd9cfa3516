"""Calendar events between Google's resource shape and what the tools take and return.

The model sees a flat event (title, start, end, all_day, attendees with their answers) and
writes times as it naturally would: "2026-12-03T14:00" with an optional time zone, or a
bare date for an all-day event. Google wants `{"dateTime", "timeZone"}` or `{"date"}`, an
exclusive end date for all-day events, and RFC 3339 with an offset for list bounds.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from ..google.errors import GoogleError

# Long descriptions (agendas, pasted threads) are cut for the model.
MAX_DESCRIPTION_CHARS = 4000
DEFAULT_DURATION = timedelta(hours=1)


def shape(event: dict[str, Any], calendar_id: str | None = None) -> dict[str, Any]:
    """Google's event resource as the flat dict the tools return."""
    start, end = event.get("start") or {}, event.get("end") or {}
    description = event.get("description") or ""
    shaped: dict[str, Any] = {
        "id": event["id"],
        "title": event.get("summary", ""),
        "status": event.get("status", "confirmed"),
        "start": start.get("dateTime") or start.get("date"),
        "end": end.get("dateTime") or end.get("date"),
        "all_day": "date" in start,
        "time_zone": start.get("timeZone"),
        "location": event.get("location"),
        "description": description[:MAX_DESCRIPTION_CHARS],
        "organizer": (event.get("organizer") or {}).get("email"),
        "attendees": [
            {
                "email": a.get("email"),
                "response": a.get("responseStatus", "needsAction"),
                **({"self": True} if a.get("self") else {}),
                **({"optional": True} if a.get("optional") else {}),
            }
            for a in event.get("attendees") or []
        ],
        "url": event.get("htmlLink"),
        "updated": event.get("updated"),
    }
    if calendar_id:
        shaped["calendar_id"] = calendar_id
    if event.get("recurringEventId"):
        shaped["recurring_event_id"] = event["recurringEventId"]
    if event.get("hangoutLink"):
        shaped["meet_link"] = event["hangoutLink"]
    return {k: v for k, v in shaped.items() if v not in (None, "")}


def parse_when(value: str, field: str) -> datetime | date:
    """An ISO 8601 date or date-time; a readable error names the field otherwise."""
    try:
        if len(value) == 10:
            return date.fromisoformat(value)
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise GoogleError(
            f"{field}: {value!r} is not an ISO date (2026-12-03) or date-time "
            "(2026-12-03T14:00, optionally with an offset)"
        ) from None


def time_field(moment: datetime | date, time_zone: str | None) -> dict[str, str]:
    """Google's EventDateTime for a date (all-day) or a date-time."""
    if not isinstance(moment, datetime):
        return {"date": moment.isoformat()}
    value = {"dateTime": moment.isoformat()}
    if time_zone:
        value["timeZone"] = time_zone
    elif moment.tzinfo is None:
        raise GoogleError("A time without an offset needs `time_zone` (e.g. Europe/Zurich).")
    return value


def times(
    start: str, end: str | None, time_zone: str | None
) -> tuple[dict[str, str], dict[str, str]]:
    """Start and end fields; a missing end is one hour later, or the next day if all-day."""
    begin = parse_when(start, "start")
    if end:
        finish = parse_when(end, "end")
    elif isinstance(begin, datetime):
        finish = begin + DEFAULT_DURATION
    else:
        finish = begin + timedelta(days=1)  # all-day ends are exclusive
    if isinstance(begin, datetime) != isinstance(finish, datetime):
        raise GoogleError("start and end must both be dates or both be date-times.")
    if finish <= begin:
        raise GoogleError("end must be after start.")
    return time_field(begin, time_zone), time_field(finish, time_zone)


def bound(value: str, field: str) -> str:
    """A list bound as RFC 3339 with an offset (Google rejects bare local times)."""
    moment = parse_when(value, field)
    if not isinstance(moment, datetime):
        moment = datetime.combine(moment, datetime.min.time())
    if moment.tzinfo is None:
        moment = moment.astimezone()  # the machine's zone, as a person would mean it
    return moment.isoformat()


def attendee_list(emails: list[str]) -> list[dict[str, str]]:
    return [{"email": email} for email in emails]
