"""Briefings from structure: our code, not the model, decides what a channel shows.

A briefing is built from items that carry a priority, a summary, a why, event ids and
actions; the plain text (and the JSON structure platforms render as Block Kit) come only
from those fields, so no model preamble, reasoning or sentinel can reach a channel. Sections
follow priority — URGENT, HIGH, FYI — then one line folding the ``low`` events per source
and one for muted events; ``drop`` never appears. Each section is capped so a flood stays
one readable message.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, tzinfo
from typing import Any

from bothost.events.triage import one_line, plural
from bothost.models import Briefing, BriefingItem

SECTIONS = (("urgent", "URGENT"), ("high", "HIGH"), ("normal", "FYI"))
MAX_ITEMS_PER_SECTION = 10  # Slack allows 50 blocks; three full sections plus lines fit
ACTION_LABELS = {"ack": "Ack", "snooze": "Snooze", "open": "Open", "mute": "Mute"}
WHY_CHARS = 400


def cap_section(items: list[BriefingItem], priority: str) -> list[BriefingItem]:
    """At most MAX_ITEMS_PER_SECTION items; the rest folded into one counted item."""
    if len(items) <= MAX_ITEMS_PER_SECTION:
        return items
    keep, rest = items[: MAX_ITEMS_PER_SECTION - 1], items[MAX_ITEMS_PER_SECTION - 1 :]
    ids = [i for item in rest for i in item.event_ids]
    folded = BriefingItem(
        priority=priority,
        summary=f"{len(rest)} more {plural('item', len(rest))} ({len(ids)} "
        f"{plural('event', len(ids))})",
        event_ids=ids,
    )
    return keep + [folded]


def build_briefing(
    items: list[BriefingItem],
    *,
    low_ids: list[int],
    muted_ids: list[int],
    muted_summary: str,
    low_summary: str = "",
    targets: list[str],
    now: float,
    tz: tzinfo,
    footer: str = "",
) -> Briefing:
    """A briefing of ``items`` plus counted low and muted events, with its text rendered."""
    shown: list[BriefingItem] = []
    for priority, _ in SECTIONS:
        section = [clean(item) for item in items if item.priority == priority]
        shown += cap_section(section, priority)
    event_ids = sorted(
        {i for item in shown for i in item.event_ids} | set(low_ids) | set(muted_ids)
    )
    count = len(event_ids)
    moment = datetime.fromtimestamp(now, tz)
    briefing = Briefing(
        title=f"Briefing · {moment:%a %H:%M} · {count} {plural('event', count)}",
        items=shown,
        text="",
        targets=list(targets),
        event_ids=event_ids,
        low_count=len(low_ids),
        muted_count=len(muted_ids),
        muted_summary=muted_summary,
        low_summary=low_summary,
        created_at=now,
        footer=one_line(footer, WHY_CHARS) if footer else "",
    )
    briefing.text = render_text(briefing)
    return briefing


def clean(item: BriefingItem) -> BriefingItem:
    """The item with its text fields as single short lines and only known actions."""
    actions = [a for a in dict.fromkeys(item.actions) if a in ACTION_LABELS]
    return dataclasses.replace(
        item,
        summary=one_line(item.summary),
        why=one_line(item.why, WHY_CHARS),
        actions=actions,
        event_ids=list(item.event_ids),
    )


def item_line(item: BriefingItem) -> str:
    line = f"• {item.summary}"
    if item.why:
        why = item.why if item.why[-1] in ".!?…" else item.why + "."
        line += f" — {why}"
    if item.actions:
        line += "  " + " ".join(f"[{ACTION_LABELS[a]}]" for a in item.actions)
    return line


def render_text(briefing: Briefing) -> str:
    """The plain-text briefing (console, web, webhook, and Slack's fallback text)."""
    lines = [briefing.title]
    for priority, heading in SECTIONS:
        section = [item for item in briefing.items if item.priority == priority]
        if section:
            lines.append(heading)
            lines += [item_line(item) for item in section]
    if briefing.low_count:
        lines.append(briefing.low_line())
    if briefing.muted_count:
        what = briefing.muted_summary or f"{briefing.muted_count} events"
        lines.append(f"Muted: {what}.")
    if briefing.footer:
        lines.append(briefing.footer)
    return "\n".join(lines)


def to_structure(briefing: Briefing) -> dict[str, Any]:
    """The JSON stored in ``briefings.structure``; platforms render Block Kit from it."""
    return {
        "title": briefing.title,
        "created_at": briefing.created_at,
        "sections": [
            {
                "priority": priority,
                "heading": heading,
                "items": [dataclasses.asdict(i) for i in briefing.items if i.priority == priority],
            }
            for priority, heading in SECTIONS
        ],
        "low_count": briefing.low_count,
        "muted_count": briefing.muted_count,
        "muted_summary": briefing.muted_summary,
        "low_summary": briefing.low_summary,
        "event_ids": briefing.event_ids,
        "targets": briefing.targets,
        "footer": briefing.footer,
    }


def from_structure(data: dict[str, Any], text: str, briefing_id: int | None = None) -> Briefing:
    """A stored briefing back as a :class:`Briefing` (to re-deliver or list it)."""
    items = [BriefingItem(**item) for section in data["sections"] for item in section["items"]]
    return Briefing(
        title=data["title"],
        items=items,
        text=text,
        targets=list(data.get("targets", [])),
        event_ids=list(data.get("event_ids", [])),
        low_count=data.get("low_count", 0),
        muted_count=data.get("muted_count", 0),
        muted_summary=data.get("muted_summary", ""),
        low_summary=data.get("low_summary", ""),
        id=briefing_id,
        created_at=data.get("created_at", 0.0),
        footer=data.get("footer", ""),
    )
