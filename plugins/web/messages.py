"""Messages the bot sends a web-chat session on its own, handed from host to host.

``WebPlatform.send`` may run on any host sharing the store while the session's page is held
by another, and a cross-host notice carries ids, never bodies (PostgreSQL's NOTIFY stops at
8000 bytes). So the text goes into the plugin's table ``web_messages`` (migration ``web:2``)
and every host's :class:`~bothost.plugins.web.feed.Feed` pushes the new rows to its pages of
that session. The table is a hand-off, not a transcript: old rows are pruned on insert.
"""

from __future__ import annotations

import time
from typing import Any

from bothost.plugins.web import feed

KEEP = 500  # rows kept: enough for a host that was away a while to catch up

SCHEMA_2 = """
CREATE TABLE web_messages (
    id INTEGER PRIMARY KEY, session TEXT NOT NULL, text TEXT NOT NULL, created_at REAL NOT NULL
)
"""


def migrate_2(db: Any) -> None:
    db.script(SCHEMA_2)


def insert(db: Any, session: str, text: str) -> dict[str, Any]:
    row = {"session": session, "text": text, "created_at": time.time()}
    return {**row, "id": feed.append(db, "web_messages", row, KEEP)}


def newest(db: Any) -> int:
    return int(db.value("SELECT MAX(id) FROM web_messages") or 0)


def since(db: Any, after: int, limit: int) -> list[dict[str, Any]]:
    return db.query(
        "SELECT id, session, text, created_at FROM web_messages WHERE id > ? ORDER BY id LIMIT ?",
        (after, limit),
    )
