"""Rendering: the DESIGN example briefing, section caps, and the stored structure."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from bothost.events.render import (
    MAX_ITEMS_PER_SECTION,
    build_briefing,
    from_structure,
    to_structure,
)
from bothost.models import BriefingItem

ZURICH = ZoneInfo("Europe/Zurich")
WED_0800 = datetime(2026, 12, 2, 8, 0, tzinfo=ZURICH).timestamp()


def test_the_design_example_renders_as_shown():
    items = [
        BriefingItem("normal", "Rain in Zurich from 17:00 (80 %).", event_ids=[9]),
        BriefingItem(
            "urgent",
            "db-1 disk at 95% (ssh alert, 06:12)",
            why="nightly backup will fail at 23:00",
            event_ids=[1],
            actions=["ack", "snooze"],
        ),
        BriefingItem(
            "high",
            "Budget review moved to 14:00",
            why='3 emails from ana@corp, and it now overlaps your 14:00 "1:1 with Sam" (gcal)',
            event_ids=[2, 3, 4],
            actions=["open"],
        ),
    ]
    briefing = build_briefing(
        items,
        low_ids=[],
        muted_ids=[5, 6, 7, 8],
        muted_summary="4 newsletters (gmail/label:promotions)",
        targets=["web:briefings"],
        now=WED_0800,
        tz=ZURICH,
    )
    assert briefing.text == "\n".join(
        [
            "Briefing · Wed 08:00 · 9 events",
            "URGENT",
            "• db-1 disk at 95% (ssh alert, 06:12) — nightly backup will fail at 23:00.  [Ack]"
            " [Snooze]",
            "HIGH",
            "• Budget review moved to 14:00 — 3 emails from ana@corp, and it now overlaps your"
            ' 14:00 "1:1 with Sam" (gcal).  [Open]',
            "FYI",
            "• Rain in Zurich from 17:00 (80 %).",
            "Muted: 4 newsletters (gmail/label:promotions).",
        ]
    )
    again = from_structure(to_structure(briefing), briefing.text, 7)
    assert again.items == briefing.items and again.id == 7
    assert again.muted_count == 4 and again.event_ids == list(range(1, 10))


def test_a_flood_is_folded_into_one_counted_item():
    items = [BriefingItem("normal", f"thing {n}", event_ids=[n]) for n in range(40)]
    briefing = build_briefing(
        items, low_ids=[], muted_ids=[], muted_summary="", targets=[], now=WED_0800, tz=ZURICH
    )
    assert len(briefing.items) == MAX_ITEMS_PER_SECTION
    assert briefing.items[-1].summary == "31 more items (31 events)"
    assert briefing.text.splitlines()[0].endswith("· 40 events")


def test_text_fields_become_single_short_lines():
    item = BriefingItem("high", "line one\nline two\x1b[31m", why="a" * 1000, event_ids=[1])
    briefing = build_briefing(
        [item], low_ids=[], muted_ids=[], muted_summary="", targets=[], now=WED_0800, tz=ZURICH
    )
    line = briefing.text.splitlines()[2]
    assert line.startswith("• line one line two [31m — aaa") and len(line) < 500
    assert "\x1b" not in briefing.text
