"""Replay: the events a dry run judges, and what it reports — ``bothost tick --dry-run``.

A dry run triages either the pending queue or a file of events with the very code a tick
runs (:func:`bothost.events.tick.decide`) and writes nothing. This module owns the two ends
of it that are not the tick's: reading a JSON Lines file of events (each ``{"source",
"type", "payload"}``, optional ``received_at`` as epoch seconds or ISO 8601, other fields
such as a corpus's ``"expected"`` ignored), and the ``--json`` report, one entry per input
event in input order. A muted event reports ``drop``: a mute is applied like a drop rule.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from bothost.events.tick import Decision
from bothost.events.triage import MUTED, QueuedEvent
from bothost.models import Briefing, BriefingItem

MAX_LINES = 50_000  # a tick's own bound (MAX_EVENTS_PER_TICK): a larger file is not a tick


class ReplayInputError(ValueError):
    """A line of the events file a tick could not take; the message names the line."""


def read_events(lines: Iterable[str], now: float) -> list[QueuedEvent]:
    """The events of a JSON Lines text, ids 1, 2, … in input order; blank lines skipped."""
    events: list[QueuedEvent] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if len(events) >= MAX_LINES:
            raise ReplayInputError(f"more than {MAX_LINES:,} events; a tick takes at most that")
        try:
            events.append(event_of(json.loads(line), len(events) + 1, now))
        except (ValueError, TypeError) as exc:
            raise ReplayInputError(f"line {number}: {exc}") from None
    return events


def event_of(data: Any, event_id: int, now: float) -> QueuedEvent:
    if not isinstance(data, dict):
        raise ValueError('expected an object {"source", "type", "payload"}')
    for key in ("source", "type"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ValueError(f"{key!r} must be a non-empty text")
    payload = data.get("payload", {})
    if not isinstance(payload, dict):
        raise ValueError("'payload' must be an object")
    return QueuedEvent(event_id, data["source"], data["type"], payload, received(data, now))


def received(data: dict[str, Any], now: float) -> float:
    """``received_at`` as epoch seconds; ``now`` when it is absent."""
    value = data.get("received_at")
    if value is None:
        return now
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if moment.tzinfo is not None:
                return moment.timestamp()
            raise ValueError(f"'received_at' {value!r} needs a UTC offset (Z or +01:00)")
    raise ValueError("'received_at' must be epoch seconds or ISO 8601 with an offset")


def priority_of(decision: Decision | None, event: QueuedEvent) -> str:
    """What the tick gave ``event``: one of urgent, high, normal, low, drop."""
    found = decision.triage.priorities.get(event.id, "normal") if decision else "normal"
    return "drop" if found == MUTED else found


def report(
    events: list[QueuedEvent], decision: Decision | None, *, with_ids: bool
) -> dict[str, Any]:
    """The ``--json`` object: ``events`` in input order and ``briefing`` (or null).

    Items name their events by ``index`` into ``events``; with ``with_ids`` (the pending
    queue) each entry also carries its event's ``id``."""
    index = {e.id: n for n, e in enumerate(events)}
    entries = []
    for n, event in enumerate(events):
        entry: dict[str, Any] = {"index": n, "priority": priority_of(decision, event)}
        if with_ids:
            entry["id"] = event.id
        entries.append(entry)
    briefing = decision.briefing if decision else None
    return {"events": entries, "briefing": briefed(briefing, index) if briefing else None}


def briefed(briefing: Briefing, index: dict[int, int]) -> dict[str, Any]:
    """``text``, ``items``, and ``folded``: the events counted in the low or muted line
    rather than shown in an item."""
    shown = {i for item in briefing.items for i in item.event_ids}
    return {
        "text": briefing.text,
        "items": [item_of(item, index) for item in briefing.items],
        "folded": [index[i] for i in briefing.event_ids if i in index and i not in shown],
    }


def item_of(item: BriefingItem, index: dict[int, int]) -> dict[str, Any]:
    return {
        "priority": item.priority,
        "summary": item.summary,
        "why": item.why,
        "events": [index[i] for i in item.event_ids if i in index],
        "actions": item.actions,
    }
