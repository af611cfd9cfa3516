"""The briefings delivered to ``web:`` addresses: kept in the store, shown on the page.

A page may be closed when a briefing arrives, and ``bothost tick`` delivers from another
process, so delivery writes a row to the plugin's own table ``web_briefings`` (migration
component ``web``); open pages get it pushed at once, on whichever host holds them (see
:mod:`bothost.plugins.web.feed`), and every page reads the recent rows when it loads and when
it polls. Old rows are pruned on insert.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

from bothost.plugins.web import feed

from bothost.models import Address, Briefing

KEEP = 500  # rows kept; the page shows the latest few, the rest is history nobody reads
RECENT = 20

SCHEMA_1 = """
CREATE TABLE web_briefings (
    id INTEGER PRIMARY KEY, address TEXT NOT NULL, briefing_id INTEGER, title TEXT NOT NULL,
    text TEXT NOT NULL, structure TEXT NOT NULL, created_at REAL NOT NULL
)
"""


def migrate_1(db: Any) -> None:
    db.script(SCHEMA_1)


def structure(briefing: Briefing) -> dict[str, Any]:
    """The briefing as JSON-able data (items by priority, counts) for the page."""
    return {
        "title": briefing.title,
        "items": [dataclasses.asdict(item) for item in briefing.items],
        "low_count": briefing.low_count,
        "muted_count": briefing.muted_count,
        "muted_summary": briefing.muted_summary,
        "low_summary": briefing.low_summary,
        "footer": briefing.footer,
        "event_ids": list(briefing.event_ids),
    }


def insert(db: Any, address: Address, briefing: Briefing) -> dict[str, Any]:
    """Record one delivery; returns the row as the page shows it."""
    row = {
        "address": str(address),
        "briefing_id": briefing.id,
        "title": briefing.title,
        "text": briefing.text,
        "structure": json.dumps(structure(briefing), default=str),
        "created_at": time.time(),
    }
    return public({**row, "id": feed.append(db, "web_briefings", row, KEEP)})


COLUMNS = "id, address, briefing_id, title, text, structure, created_at"


def newest(db: Any) -> int:
    return int(db.value("SELECT MAX(id) FROM web_briefings") or 0)


def since(db: Any, after: int, limit: int) -> list[dict[str, Any]]:
    """The rows after id ``after``, oldest first (what a host's pages have not been shown)."""
    rows = db.query(
        f"SELECT {COLUMNS} FROM web_briefings WHERE id > ? ORDER BY id LIMIT ?", (after, limit)
    )
    return [public(row) for row in rows]


def recent(db: Any, limit: int = RECENT) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT id, address, briefing_id, title, text, structure, created_at FROM web_briefings"
        " ORDER BY id DESC LIMIT ?",
        (limit,),
    ).fetchall()
    keys = ("id", "address", "briefing_id", "title", "text", "structure", "created_at")
    return [public(dict(zip(keys, r, strict=True))) for r in rows]


def public(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    out["structure"] = json.loads(out["structure"]) if isinstance(out["structure"], str) else {}
    return out
