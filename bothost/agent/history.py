"""A session's transcript in SQLite: sessions, messages, summaries and grants.

Messages are stored in the neutral form of :mod:`bothost.llm.base`; extra keys (tool calls,
the tool call id, the ``private`` / ``untrusted`` flags of a tool result) live in the
``data`` JSON column, as does ``offline``: the message belongs to a turn the offline agent
answered (:data:`OFFLINE`; :func:`for_a_model` leaves those turns out once a model answers).
Nothing here is ever deleted: a summary (``summaries``) stands in for
the messages it covers, and :mod:`bothost.agent.compaction` decides what the model sees.
``/new`` (:func:`start_fresh`) stores a summary row that covers the session's messages and
says nothing (``method`` :data:`FRESH`): the model reads what came after it, and the old
messages stay in the store.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from bothost.llm.base import estimate_tokens
from bothost.models import Session
from bothost.store import Store

# ``stopped``: an assistant message holding what a stopped turn had streamed
EXTRA_KEYS = (
    "tool_calls",
    "tool_call_id",
    "name",
    "private",
    "untrusted",
    "is_error",
    "stopped",
    "offline",
)
# Every message of a turn the offline agent answered carries this flag, the person's too:
# their words were a command to a program ("help", "call …") or a question it could not
# answer, and a model shown unanswered questions answers them all over again, while a
# `call`'s tool result without its assistant call is no valid request at all.
OFFLINE = "offline"
OFFLINE_AGENT = "offline"  # the offline agent's provider name (bothost.llm.offline)
# Messages kept in memory across the sessions' windows (estimated tokens, ~4 characters
# each): the most recently read sessions stay, about 16 MB of text at most.
KEPT_TOKENS = 4_000_000
FRESH = "fresh"  # a summaries row's method: a fresh start, standing in for nothing


def session_row(session: Session, now: float) -> dict[str, Any]:
    return {
        "id": session.id,
        "platform": session.address.platform,
        "channel": session.address.channel,
        "thread": session.address.thread,
        "user": session.user,
        "created_at": now,
        "updated_at": now,
    }


UPSERT_SESSION = (
    'INSERT INTO sessions (id, platform, channel, thread, "user", created_at, updated_at)'
    " VALUES (:id, :platform, :channel, :thread, :user, :created_at, :updated_at)"
    " ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at"
)


def message_row(session_id: str, turn_id: str, message: dict[str, Any]) -> dict[str, Any]:
    data = {k: message[k] for k in EXTRA_KEYS if message.get(k) not in (None, False, [])}
    return {
        "session_id": session_id,
        "turn_id": turn_id,
        "role": message["role"],
        "content": message.get("content", ""),
        "data": json.dumps(data) if data else None,
        "tokens": estimate_tokens(message),
        "created_at": time.time(),
    }


async def append(store: Store, session_id: str, turn_id: str, message: dict[str, Any]) -> None:
    row = message_row(session_id, turn_id, message)
    await store.run(lambda db: db.insert("messages", row))


async def open_turn(
    store: Store,
    session: Session,
    turn_id: str,
    message: dict[str, Any],
    limit: int,
    windows: Windows | None = None,
) -> Opening:
    """Record the session and the person's ``message`` in one transaction, then read the
    session's grants, latest summary and newest ``limit`` messages: one store round trip
    where a turn's first round took five (issue 19). With ``windows``, only the messages
    added since the session's last read are read."""
    session_data = session_row(session, time.time())
    row = message_row(session.id, turn_id, message)
    load = windows.load if windows is not None else load_window

    def write(db: Any) -> Opening:
        with db.transaction():
            db.execute(UPSERT_SESSION, session_data)
            db.insert("messages", row)
        return Opening(read_grants(db, session.id), *load(db, session.id, limit))

    return await store.run(write)


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


@dataclass
class Opening:
    """What a turn's first round reads, loaded with the turn's opening write."""

    grants: set[str]
    summary: Summary | None
    rows: list[Stored]


def as_message(row: dict[str, Any]) -> dict[str, Any]:
    message = {"role": row["role"], "content": row["content"] or ""}
    message.update(json.loads(row["data"]) if row["data"] else {})
    return message


def load_since(db: Any, session_id: str, after: int, limit: int) -> list[Stored]:
    rows = db.query(
        "SELECT id, role, content, data, tokens, created_at FROM messages"
        " WHERE session_id = ? AND id > ? ORDER BY id DESC LIMIT ?",
        [session_id, after, limit],
    )
    return [
        Stored(r["id"], as_message(r), r["tokens"] or 0, r["created_at"]) for r in reversed(rows)
    ]


async def window(
    store: Store, session_id: str, limit: int, windows: Windows | None = None
) -> tuple[Summary | None, list[Stored]]:
    """The latest summary and the newest ``limit`` messages after it, in one round trip."""
    load = windows.load if windows is not None else load_window
    return await store.run(lambda db: load(db, session_id, limit))


def load_window(db: Any, session_id: str, limit: int) -> tuple[Summary | None, list[Stored]]:
    summary, after = newest_start(db, session_id)
    return summary, load_since(db, session_id, after, limit)


def newest_start(db: Any, session_id: str) -> tuple[Summary | None, int]:
    """The summary the model reads (None after a fresh start) and the id it covers through."""
    summary = load_summary(db, session_id)
    after = summary.covers_through if summary else 0
    if summary is not None and summary.method == FRESH:
        return None, after
    return summary, after


@dataclass
class _Kept:
    after: int  # the summary's covers_through when these rows were read (0: no summary)
    last: int  # every message of the session up to this id has been read
    rows: list[Stored]
    tokens: int


class Windows:
    """Each recent session's window (the messages after its newest summary), kept between
    turns, so a turn reads the summary row and the messages added since the last read
    rather than the whole window: at 1,000 messages that read was most of a turn (issue 19).

    What another host or process writes is still seen: every read takes the newest summary
    (dropping the kept rows it covers) and every message past the last id read. Messages
    are only appended, one turn of a session at a time (``SessionLocks``), so no message
    can appear below an id already read. Only store jobs (the store's one thread) use it,
    so it needs no lock. Callers must not change the messages they are given.
    """

    def __init__(self, tokens: int | None = None) -> None:
        self._kept: OrderedDict[str, _Kept] = OrderedDict()  # least recently read first
        self._bound = KEPT_TOKENS if tokens is None else tokens
        self._tokens = 0

    def load(self, db: Any, session_id: str, limit: int) -> tuple[Summary | None, list[Stored]]:
        """What :func:`load_window` returns, from the kept rows and the new ones."""
        summary, after = newest_start(db, session_id)
        kept = self._kept.pop(session_id, None)
        if kept is not None:
            self._tokens -= kept.tokens
        if kept is None or after < kept.after:  # a summary went away: nothing to build on
            rows = load_since(db, session_id, after, limit)
            last = rows[-1].id if rows else after
        else:
            newer = load_since(db, session_id, max(after, kept.last), limit)
            rows = [r for r in kept.rows if r.id > after] + newer
            del rows[:-limit]  # the newest `limit`, as a fresh read has them
            last = max(kept.last, after, rows[-1].id if rows else 0)
        tokens = sum(r.tokens for r in rows)
        self._kept[session_id] = _Kept(after, last, rows, tokens)
        self._tokens += tokens
        while self._tokens > self._bound and len(self._kept) > 1:
            _, oldest = self._kept.popitem(last=False)
            self._tokens -= oldest.tokens
        return summary, list(rows)


def for_a_model(rows: list[Stored]) -> list[Stored]:
    """``rows`` without the turns the offline agent answered (:data:`OFFLINE`)."""
    return [r for r in rows if not r.message.get(OFFLINE)]


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


def load_summary(db: Any, session_id: str) -> Summary | None:
    r = db.one(
        "SELECT covers_through, content, tokens, private, untrusted, method"
        " FROM summaries WHERE session_id = ? ORDER BY covers_through DESC, id DESC"
        " LIMIT 1",
        [session_id],
    )
    if r is None:
        return None
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


async def start_fresh(store: Store, session_id: str) -> None:
    """Start the session afresh (``/new``): a :data:`FRESH` row covering every message so far."""

    def write(db: Any) -> None:
        covers = db.value("SELECT MAX(id) FROM messages WHERE session_id = ?", [session_id])
        db.execute(
            "INSERT INTO summaries (session_id, covers_through, content, tokens, private,"
            " untrusted, method, created_at) VALUES (?, ?, '', 0, 0, 0, ?, ?)",
            [session_id, covers or 0, FRESH, time.time()],
        )

    await store.run(write)


def fresh_since(db: Any, session_id: str) -> int:
    """The message id the session's latest fresh start covers through (0: none)."""
    sql = "SELECT MAX(covers_through) FROM summaries WHERE session_id = ? AND method = ?"
    return db.value(sql, [session_id, FRESH]) or 0


def read_grants(db: Any, session_id: str) -> set[str]:
    rows = db.execute("SELECT server FROM mcp_grants WHERE session_id = ?", [session_id])
    return {r[0] for r in rows}


async def grants(store: Store, session_id: str) -> set[str]:
    return await store.run(lambda db: read_grants(db, session_id))


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
