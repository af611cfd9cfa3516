"""A platform's conversations: each session cut at its fresh starts (``/new``).

A session is keyed by where it happens, so one place holds every conversation had there;
``/new`` stores a :data:`bothost.agent.history.FRESH` summaries row covering the messages
before it. A conversation is therefore a session and a *start*: the id of the last message
before it (0 for the session's first), running to the next fresh start or, for the
session's newest conversation (``current``), on. Conversations with nothing said in them
(``/new`` twice running) are left out, except a session's current one.

Every function here runs on the store's thread with a :class:`bothost.store.Conn`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bothost.agent.history import FRESH

if TYPE_CHECKING:
    from bothost.store import Conn

FIRST_LINE = 200  # characters of a conversation's first message a listing carries
# what a transcript shows: the person's and the bot's words, a stopped turn's reply even
# when it streamed nothing; tool traffic left out
SHOWN = (
    "role IN ('user', 'assistant') AND content IS NOT NULL"
    " AND (content != '' OR data LIKE '%\"stopped\"%')"
)


@dataclass(frozen=True)
class Conversation:
    """One conversation of a session, as a listing of them shows it."""

    session: str  # the session's address as text (``web:default``)
    channel: str  # where it happens (the web page's session name)
    start: int  # the id of the last message before it (0: the session's first)
    current: bool  # the session's newest: what a message there continues
    first: str  # the first thing the person said, cut to FIRST_LINE ("" when nothing yet)
    started_at: float  # its first message's time (the fresh start's, when nothing yet)
    updated_at: float  # its newest message's time
    messages: int  # messages shown in its transcript


def starts(db: Conn, session_id: str) -> list[tuple[int, float]]:
    """The session's fresh starts, oldest first: (covers_through, created_at)."""
    rows = db.execute(
        "SELECT covers_through, MIN(created_at) FROM summaries WHERE session_id = ?"
        " AND method = ? GROUP BY covers_through ORDER BY covers_through",
        [session_id, FRESH],
    )
    return [(r[0], r[1]) for r in rows]


def end_of(db: Conn, session_id: str, start: int) -> int | None:
    """The id of the last message of the conversation beginning after ``start`` (None: it
    is the current one and runs on)."""
    return db.value(
        "SELECT MIN(covers_through) FROM summaries WHERE session_id = ? AND method = ?"
        " AND covers_through > ?",
        [session_id, FRESH, start],
    )


def conversation(
    db: Conn, session_id: str, channel: str, start: int, end: int | None, fresh_at: float
) -> Conversation:
    top = end if end is not None else 2**62  # the current one: every id after its start
    count, first_at, last_at = db.execute(
        f"SELECT COUNT(*), MIN(created_at), MAX(created_at) FROM messages WHERE session_id = ?"
        f" AND id > ? AND id <= ? AND {SHOWN}",
        [session_id, start, top],
    ).fetchone()
    first = db.value(
        "SELECT content FROM messages WHERE session_id = ? AND id > ? AND id <= ?"
        " AND role = 'user' AND content != '' ORDER BY id LIMIT 1",
        [session_id, start, top],
    )
    line = (first or "").strip().split("\n", 1)[0][:FIRST_LINE]
    return Conversation(
        session_id,
        channel,
        start,
        end is None,
        line,
        first_at or fresh_at,
        last_at or fresh_at,
        count or 0,
    )


def listing(db: Conn, platform: str, limit: int) -> list[Conversation]:
    """The newest ``limit`` conversations of ``platform``'s sessions, newest first."""
    sessions = db.execute(
        "SELECT id, channel, created_at FROM sessions WHERE platform = ?"
        " ORDER BY updated_at DESC, id LIMIT ?",
        [platform, limit],
    ).fetchall()
    found: list[Conversation] = []
    for session_id, channel, created_at in sessions:
        cuts = starts(db, session_id)
        bounds = [(0, created_at), *cuts]
        for i, (start, at) in enumerate(bounds):
            end = bounds[i + 1][0] if i + 1 < len(bounds) else None
            if end is not None and end <= start:
                continue  # /new twice running: nothing between them
            item = conversation(db, session_id, channel or "", start, end, at)
            if item.messages or item.current:
                found.append(item)
    found.sort(key=lambda c: (c.updated_at, c.start), reverse=True)
    return found[:limit]
