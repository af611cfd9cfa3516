"""A session's transcript in SQLite: sessions, messages and grants, and the context window.

Messages are stored in the neutral form of :mod:`bothost.llm.base`; extra keys (tool calls,
the tool call id, the ``private`` / ``untrusted`` flags of a tool result) live in the
``data`` JSON column. The context given to the model is the newest messages that fit the
token budget, starting at a user message so tool results never lose their call.
"""

from __future__ import annotations

import json
import time
from typing import Any

from bothost.llm.base import estimate_tokens
from bothost.models import Session
from bothost.store import Store

EXTRA_KEYS = ("tool_calls", "tool_call_id", "name", "private", "untrusted", "is_error")
MAX_LOADED = 500  # messages read per turn before trimming to the token budget


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
            "INSERT INTO sessions (id, platform, channel, thread, user, created_at, updated_at)"
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
    await store.run(lambda db: db.table("messages").insert(row))


async def context(store: Store, session_id: str, budget: int) -> list[dict[str, Any]]:
    def load(db: Any) -> list[dict[str, Any]]:
        return list(
            db.query(
                "SELECT role, content, data, tokens FROM messages WHERE session_id = ?"
                " ORDER BY id DESC LIMIT ?",
                [session_id, MAX_LOADED],
            )
        )

    rows = await store.run(load)
    kept: list[dict[str, Any]] = []
    used = 0
    for row in rows:  # newest first
        used += row["tokens"] or 0
        if used > budget and kept:
            break
        message = {"role": row["role"], "content": row["content"] or ""}
        message.update(json.loads(row["data"]) if row["data"] else {})
        kept.append(message)
    kept.reverse()
    while kept and kept[0]["role"] != "user":
        kept.pop(0)
    return kept


async def grants(store: Store, session_id: str) -> set[str]:
    rows = await store.run(
        lambda db: list(
            db.query("SELECT server FROM mcp_grants WHERE session_id = ?", [session_id])
        )
    )
    return {r["server"] for r in rows}


async def grant(store: Store, session_id: str, groups: list[str]) -> None:
    now = time.time()

    def insert(db: Any) -> None:
        for group in groups:
            db.execute(
                "INSERT OR IGNORE INTO mcp_grants VALUES (?, ?, ?)", [session_id, group, now]
            )

    await store.run(insert)
