"""What a person can do about events: acknowledge, snooze, mute, retry, and list them.

These are the host functions behind the platforms' buttons ([Ack] [Snooze] [Mute]) and the
``bothost events`` commands. Each is idempotent — a button pressed twice, or a Slack retry
of the same action, leaves the same state — and each is one short transaction, so it is
safe while a tick runs: the tick only settles events that are still ``pending``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from bothost.events.dedupe import canonical_json
from bothost.events.triage import check_match
from bothost.store.conn import Conn

LIST_LIMIT = 200  # a listing is for people; --json with --limit for more


async def acknowledge(store: Any, event_ids: list[int]) -> int:
    """Mark events done (seen, nothing more to say); how many changed."""
    return await store.run(lambda db: _set_done(db, list(event_ids)))


async def snooze(store: Any, event_ids: list[int], until: float) -> int:
    """Hide events until ``until`` (epoch); the first tick after that shows them again."""
    return await store.run(lambda db: _set_snoozed(db, list(event_ids), until))


async def mute(
    store: Any,
    source: str | None = None,
    type: str | None = None,
    match: dict[str, str] | None = None,
    *,
    until: float | None = None,
    created_by: str = "",
) -> int:
    """Add a mute (globs on source, type and ``payload.<field>``); the mute's id."""
    if not (source or type or match):
        raise ValueError("a mute needs a source, a type or a payload match")
    check_match(match or {}, "mute")
    return await store.run(lambda db: _add_mute(db, source, type, match or {}, until, created_by))


async def unmute(store: Any, mute_id: int) -> bool:
    return await store.run(lambda db: _delete_mute(db, mute_id))


async def retry(store: Any, event_ids: list[int]) -> int:
    """Failed events back to pending with their attempts reset; how many changed."""
    return await store.run(lambda db: retry_failed(db, list(event_ids)))


def _set_done(db: Conn, ids: list[int]) -> int:
    with db.transaction() as conn:
        return conn.execute(
            "UPDATE events SET status = 'done', claimed_until = NULL, snoozed_until = NULL"
            f" WHERE status != 'done' AND id IN ({conn.ids})",
            (json.dumps(ids),),
        ).rowcount


def _set_snoozed(db: Conn, ids: list[int], until: float) -> int:
    with db.transaction() as conn:
        # out of its briefing: it comes back as a fresh event in a new briefing
        return conn.execute(
            "UPDATE events SET status = 'snoozed', snoozed_until = ?, claimed_until = NULL,"
            f" briefing_id = NULL WHERE id IN ({conn.ids})",
            (until, json.dumps(ids)),
        ).rowcount


def _add_mute(
    db: Conn,
    source: str | None,
    type_: str | None,
    match: dict[str, str],
    until: float | None,
    created_by: str,
) -> int:
    text = canonical_json(match)
    with db.transaction() as conn:
        # NULLs compared in Python: "IS ?" is SQLite's, PostgreSQL's needs a newer SQLite
        for mute_id, *found in conn.execute(
            "SELECT id, source, type, until FROM mutes WHERE match = ?", (text,)
        ):
            if found == [source, type_, until]:
                return int(mute_id)
        return int(
            conn.value(
                "INSERT INTO mutes (source, type, match, until, created_by, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (source, type_, text, until, created_by, time.time()),
            )
        )


def _delete_mute(db: Conn, mute_id: int) -> bool:
    with db.transaction() as conn:
        return conn.execute("DELETE FROM mutes WHERE id = ?", (mute_id,)).rowcount > 0


def retry_failed(db: Conn, ids: list[int]) -> int:
    with db.transaction() as conn:
        return conn.execute(
            "UPDATE events SET status = 'pending', attempts = 0, briefing_id = NULL,"
            " last_error = NULL, claimed_until = NULL"
            f" WHERE status = 'failed' AND id IN ({conn.ids})",
            (json.dumps(ids),),
        ).rowcount


def statuses(db: Conn, ids: list[int]) -> dict[int, str]:
    """The status of each of ``ids`` that exists."""
    rows = db.execute(f"SELECT id, status FROM events WHERE id IN ({db.ids})", (json.dumps(ids),))
    return {int(row[0]): str(row[1]) for row in rows}


def list_events(
    db: Conn, status: str | None = None, limit: int = LIST_LIMIT, priority: str | None = None
) -> list[dict[str, Any]]:
    """Newest first; every status unless ``status`` is given, every priority unless
    ``priority`` is."""
    clauses = [(c, v) for c, v in (("status = ?", status), ("priority = ?", priority)) if v]
    where = ("WHERE " + " AND ".join(c for c, _ in clauses)) if clauses else ""
    args: list[Any] = [v for _, v in clauses]
    rows = db.execute(
        "SELECT id, source, type, payload, received_at, status, priority, attempts,"
        f" briefing_id, last_error, snoozed_until FROM events {where} ORDER BY id DESC LIMIT ?",
        [*args, limit],
    ).fetchall()
    keys = (
        "id",
        "source",
        "type",
        "payload",
        "received_at",
        "status",
        "priority",
        "attempts",
        "briefing_id",
        "last_error",
        "snoozed_until",
    )
    result = [dict(zip(keys, row, strict=True)) for row in rows]
    for entry in result:
        entry["payload"] = json.loads(entry["payload"], parse_constant=str)  # see decode_payload
    return result


def list_briefings(db: Conn, limit: int = LIST_LIMIT) -> list[dict[str, Any]]:
    """Newest first, each with its deliveries."""
    rows = db.execute(
        "SELECT id, tick_id, created_at, status, event_count, targets, text, structure"
        " FROM briefings ORDER BY id DESC LIMIT ?",
        (limit,),
    ).fetchall()
    result = []
    for bid, tick_id, created, status, count, targets, text, structure in rows:
        deliveries = [
            {
                "target": d[0],
                "status": d[1],
                "attempts": d[2],
                "last_error": d[3],
                "delivered_at": d[4],
            }
            for d in db.execute(
                "SELECT target, status, attempts, last_error, delivered_at FROM deliveries"
                " WHERE briefing_id = ? ORDER BY id",
                (bid,),
            )
        ]
        result.append(
            {
                "id": bid,
                "tick_id": tick_id,
                "created_at": created,
                "status": status,
                "event_count": count,
                "targets": json.loads(targets),
                "text": text,
                "structure": json.loads(structure),
                "deliveries": deliveries,
            }
        )
    return result
