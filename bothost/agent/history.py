"""A session's transcript in SQLite: sessions, messages, summaries and grants.

Messages are stored in the neutral form of :mod:`bothost.llm.base`; extra keys (tool calls,
the tool call id, the ``private`` / ``untrusted`` flags of a tool result) live in the
``data`` JSON column. Nothing here is ever deleted: a summary (``summaries``) stands in for
the messages it covers, and :mod:`bothost.agent.compaction` decides what the model sees.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from bothost.llm.base import estimate_tokens
from bothost.models import Session
from bothost.store import Store

EXTRA_KEYS = ("tool_calls", "tool_call_id", "name", "private", "untrusted", "is_error")


async def ensure_session(store: Store, session: Session) -> None:
    now = time.time()
    row = {
        "id": session.id,
        "platform": session.address.platform,
        "channel": session.address.channel,
        "thread": session.address.thread,
        "user": session.user,
        "created_at": now,
        "updated_at": now,
    }

    def upsert(db: Any) -> None:
        db.execute(
            'INSERT INTO sessions (id, platform, channel, thread, "user", created_at, updated_at)'
            " VALUES (:id, :platform, :channel, :thread, :user, :created_at, :updated_at)"
            " ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at",
            row,
        )

    await store.run(upsert)


async def append(store: Store, session_id: str, turn_id: str, message: dict[str, Any]) -> None:
    data = {k: message[k] for k in EXTRA_KEYS if message.get(k) not in (None, False, [])}
    row = {
        "session_id": session_id,
        "turn_id": turn_id,
        "role": message["role"],
        "content": message.get("content", ""),
        "data": json.dumps(data) if data else None,
        "tokens": estimate_tokens(message),
        "created_at": time.time(),
    }
    await store.run(lambda db: db.insert("messages", row))


@dataclass
class Stored:
    """A message as the context is built from it: its row id, the message and its tokens."""

    id: int
    message: dict[str, Any]
    tokens: int
    created_at: float


@dataclass
class Summary:
    """A summary standing in for every message of its session up to ``covers_through``."""

    covers_through: int
    content: str
    tokens: int
    private: bool = False
    untrusted: bool = False
    method: str = "model"  # model | extract (the offline agent's)


def as_message(row: dict[str, Any]) -> dict[str, Any]:
    message = {"role": row["role"], "content": row["content"] or ""}
    message.update(json.loads(row["data"]) if row["data"] else {})
    return message


async def since(store: Store, session_id: str, after: int, limit: int) -> list[Stored]:
    """The newest ``limit`` messages after message id ``after``, oldest first."""

    def load(db: Any) -> list[dict[str, Any]]:
        return db.query(
            "SELECT id, role, content, data, tokens, created_at FROM messages"
            " WHERE session_id = ? AND id > ? ORDER BY id DESC LIMIT ?",
            [session_id, after, limit],
        )

    rows = await store.run(load)
    return [
        Stored(r["id"], as_message(r), r["tokens"] or 0, r["created_at"]) for r in reversed(rows)
    ]


async def last_user_message(store: Store, session_id: str, before: int) -> Stored | None:
    """The person's newest message before message id ``before``."""

    def load(db: Any) -> list[dict[str, Any]]:
        return list(
            db.query(
                "SELECT id, role, content, data, tokens, created_at FROM messages"
                " WHERE session_id = ? AND id < ? AND role = 'user' ORDER BY id DESC LIMIT 1",
                [session_id, before],
            )
        )

    rows = await store.run(load)
    return Stored(rows[0]["id"], as_message(rows[0]), rows[0]["tokens"] or 0, 0.0) if rows else None


async def latest_summary(store: Store, session_id: str) -> Summary | None:
    def load(db: Any) -> list[dict[str, Any]]:
        return list(
            db.query(
                "SELECT covers_through, content, tokens, private, untrusted, method"
                " FROM summaries WHERE session_id = ? ORDER BY covers_through DESC, id DESC"
                " LIMIT 1",
                [session_id],
            )
        )

    rows = await store.run(load)
    if not rows:
        return None
    r = rows[0]
    return Summary(
        r["covers_through"],
        r["content"],
        r["tokens"],
        bool(r["private"]),
        bool(r["untrusted"]),
        r["method"],
    )


async def add_summary(store: Store, session_id: str, summary: Summary) -> None:
    row = [
        session_id,
        summary.covers_through,
        summary.content,
        summary.tokens,
        int(summary.private),
        int(summary.untrusted),
        summary.method,
        time.time(),
    ]
    await store.run(
        lambda db: db.execute(
            "INSERT INTO summaries (session_id, covers_through, content, tokens, private,"
            " untrusted, method, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )
    )


async def grants(store: Store, session_id: str) -> set[str]:
    rows = await store.run(
        lambda db: db.query("SELECT server FROM mcp_grants WHERE session_id = ?", [session_id])
    )
    return {r["server"] for r in rows}


async def grant(store: Store, session_id: str, groups: list[str]) -> None:
    now = time.time()

    def insert(db: Any) -> None:
        for group in groups:
            db.execute(
                "INSERT INTO mcp_grants (session_id, server, granted_at) VALUES (?, ?, ?)"
                " ON CONFLICT (session_id, server) DO NOTHING",
                [session_id, group, now],
            )

    await store.run(insert)
