"""Questions a turn asks a web-chat session, when the session's page is held by another host.

The host running the turn asks (an approval, a form); a page of that session may be held by
another host sharing the store, and its answer may be posted to yet another. So the question
is written to the plugin's table ``web_questions`` (migration ``web:3``) and announced by id;
hosts holding a page of the session show it; the first answer posted anywhere is written to
the row (first one wins) and announced; the asking host reads it and goes on. Closing the
question (answered, timed out) marks the row, and every host takes it off its pages. A host
whose listener was away re-reads open questions and answers (``resync``).

Questions marked ``secret`` (a password form) never cross hosts: their answer would be
written to the database. Rows are pruned an hour after they close.
"""

from __future__ import annotations

import json
import time
from typing import Any

KEEP_CLOSED = 3600.0  # seconds a closed question stays (a host away that long re-reads it)
OPEN_FOR = 86400.0  # seconds after which an open row is a leftover of a host that died

SCHEMA_3 = """
CREATE TABLE web_questions (
    id TEXT PRIMARY KEY, session TEXT NOT NULL, question TEXT NOT NULL, answer TEXT,
    created_at REAL NOT NULL, closed_at REAL
)
"""


def migrate_3(db: Any) -> None:
    db.script(SCHEMA_3)


def insert(db: Any, public: dict[str, Any]) -> dict[str, Any]:
    now = time.time()
    db.execute(
        "DELETE FROM web_questions WHERE closed_at < ? OR created_at < ?",
        (now - KEEP_CLOSED, now - OPEN_FOR),
    )
    db.execute(
        "INSERT INTO web_questions (id, session, question, created_at) VALUES (?, ?, ?, ?)",
        (public["id"], public["session"], json.dumps(public), now),
    )
    return public


def answer(db: Any, question_id: str, session: str, value: Any) -> bool:
    """Record the answer unless one came first or it is closed; whether this one counts."""
    rows = db.execute(
        "UPDATE web_questions SET answer = ? WHERE id = ? AND session = ?"
        " AND answer IS NULL AND closed_at IS NULL",
        (json.dumps({"value": value}), question_id, session),
    )
    return rows.rowcount == 1


def close(db: Any, question_id: str) -> None:
    db.execute("UPDATE web_questions SET closed_at = ? WHERE id = ?", (time.time(), question_id))


def read(db: Any, question_id: str) -> dict[str, Any] | None:
    """The question (its public form), its answer (``{"value": …}`` or None) and whether it
    is closed."""
    row = db.one(
        "SELECT question, answer, closed_at FROM web_questions WHERE id = ?", (question_id,)
    )
    if row is None:
        return None
    return {
        "question": json.loads(row["question"]),
        "answer": json.loads(row["answer"]) if row["answer"] is not None else None,
        "closed": row["closed_at"] is not None,
    }


def open_ones(db: Any) -> list[dict[str, Any]]:
    """Every question still open, in their public form (a host catching up shows them)."""
    rows = db.query(
        "SELECT question FROM web_questions WHERE closed_at IS NULL AND created_at > ?",
        (time.time() - OPEN_FOR,),
    )
    return [json.loads(row["question"]) for row in rows]
