"""The state transitions of events, briefings and deliveries, as store-thread functions.

Every function takes the store's :class:`~bothost.store.Conn` and runs on its thread, each
step in its own short transaction so a crash leaves a state the next tick understands. The
steps that decide (claim, record, release, settle) take the tick's lease owner and check it
in their transaction (:func:`bothost.events.lease.fence`): a tick whose lease was taken over
raises :class:`~bothost.events.lease.LeaseLostError` instead of writing.

* ``claim``: snoozed events whose time has come return to ``pending``, and so does every
  event still ``claimed``: only the lease holder claims, and the holder is us, so those are
  claims of a tick that died or lost the lease. Then pending events are claimed. A claim
  holds as long as its tick holds the lease: renewing the lease (one row) renews them all,
  so a slow tick never rewrites its events to keep them; ``claimed_until`` records the
  lease's expiry when they were claimed. Pending events
  that belong to a briefing with deliveries still outstanding are claimed as a *retry* of
  that same briefing, not triaged again, so no target gets a second, different copy.
* ``record``: priorities are written, dropped and muted events are ``done``, held ones
  (quiet hours) go back to ``pending``, and the briefing's events name it — one UPDATE per
  distinct outcome, so each event row is written once — and the briefing with one
  ``deliveries`` row per target is stored before anything is sent.
* ``record_delivery`` / ``finish_briefing``: only a delivery recorded as delivered lets the
  briefing's events become ``done``; a failed one returns them to ``pending`` with
  ``attempts + 1``, and a target that failed ``max_attempts`` times is ``failed``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from bothost.events.lease import TICK_LOCK, fence
from bothost.events.queue import decode_payload
from bothost.events.render import from_structure, to_structure
from bothost.events.triage import Mute, QueuedEvent
from bothost.models import Briefing
from bothost.store.conn import POSTGRESQL, Conn

# PostgreSQL: rows another transaction is claiming are passed over instead of waited for, so
# claimers on several hosts never block on (or claim twice) the same events
SKIP_LOCKED = " FOR UPDATE SKIP LOCKED"


@dataclass
class Claim:
    fresh: list[QueuedEvent] = field(default_factory=list)
    retries: dict[int, list[int]] = field(default_factory=dict)  # briefing id → event ids


def start_tick(db: Conn, trigger: str, now: float, owner: str | None = None) -> int:
    """A ``ticks`` row for the tick starting now, naming the process (``owner``) running it."""
    with db.transaction() as conn:
        if owner is not None:
            fence(conn, TICK_LOCK, owner)
        # we hold the lease, so a tick still marked running died without finishing; what it
        # did record (its briefings, delivered or waiting for a retry) is still its own
        conn.execute(
            "UPDATE ticks SET status = 'abandoned', briefings ="
            " (SELECT count(*) FROM briefings b WHERE b.tick_id = ticks.id)"
            " WHERE status = 'running'"
        )
        return int(
            conn.value(
                "INSERT INTO ticks (trigger, started_at, status, owner)"
                " VALUES (?, ?, 'running', ?) RETURNING id",
                (trigger, now, owner),
            )
        )


def end_tick(
    db: Conn,
    tick_id: int,
    now: float,
    status: str,
    events: int,
    briefings: int,
    error: str | None = None,
) -> None:
    with db.transaction() as conn:
        conn.execute(
            "UPDATE ticks SET finished_at = ?, status = ?, events = ?, briefings = ?, error = ?"
            " WHERE id = ?",
            (now, status, events, briefings, error, tick_id),
        )


def last_tick_started(db: Conn) -> float | None:
    row = db.execute("SELECT max(started_at) FROM ticks").fetchone()
    return row[0] if row else None


def claim(db: Conn, now: float, ttl: float, limit: int, owner: str) -> Claim:
    """Claim up to ``limit`` pending events (and the retries) for the tick ``owner`` runs."""
    result = Claim()
    with db.transaction() as conn:
        fence(conn, TICK_LOCK, owner)
        conn.execute(
            "UPDATE events SET status = 'pending', snoozed_until = NULL"
            " WHERE status = 'snoozed' AND snoozed_until <= ?",
            (now,),
        )
        conn.execute(
            "UPDATE events SET status = 'pending', claimed_until = NULL WHERE status = 'claimed'"
        )
        # a briefing waiting for a retry whose events were all acknowledged or snoozed
        # meanwhile has nothing left to say: it is not sent again
        orphans = (
            "SELECT id FROM briefings b WHERE status = 'pending' AND NOT EXISTS"
            " (SELECT 1 FROM events e WHERE e.briefing_id = b.id"
            " AND e.status IN ('pending', 'claimed'))"
        )
        conn.execute(
            f"UPDATE deliveries SET status = 'cancelled' WHERE status = 'pending'"
            f" AND briefing_id IN ({orphans})"
        )
        conn.execute(f"UPDATE briefings SET status = 'cancelled' WHERE id IN ({orphans})")
        for event_id, briefing_id in conn.execute(
            "SELECT e.id, e.briefing_id FROM events e JOIN briefings b ON b.id = e.briefing_id"
            " WHERE e.status = 'pending' AND b.status = 'pending' ORDER BY e.id"
        ):
            result.retries.setdefault(briefing_id, []).append(event_id)
        rows = conn.execute(
            "SELECT id, source, type, payload, received_at, attempts FROM events"
            " WHERE status = 'pending' AND (briefing_id IS NULL OR briefing_id NOT IN"
            " (SELECT id FROM briefings WHERE status = 'pending')) ORDER BY id LIMIT ?"
            + (SKIP_LOCKED if conn.dialect == POSTGRESQL else ""),
            (limit,),
        ).fetchall()
        result.fresh = [
            QueuedEvent(r[0], r[1], r[2], decode_payload(r[3]), r[4], r[5]) for r in rows
        ]
        ids = [e.id for e in result.fresh] + [i for v in result.retries.values() for i in v]
        conn.execute(
            f"UPDATE events SET status = 'claimed', claimed_until = ? WHERE id IN ({conn.ids})",
            (now + ttl, json.dumps(ids)),
        )
    return result


def release(db: Conn, event_ids: list[int], owner: str) -> None:
    """Claimed events back to pending, untouched otherwise (held, or a tick that failed)."""
    with db.transaction() as conn:
        fence(conn, TICK_LOCK, owner)
        conn.execute(
            "UPDATE events SET status = 'pending', claimed_until = NULL"
            f" WHERE status = 'claimed' AND id IN ({conn.ids})",
            (json.dumps(event_ids),),
        )


def release_all(db: Conn, owner: str) -> None:
    """Every claim back to pending, if ``owner`` still holds the lease (else the claims are
    the new holder's, and its to settle)."""
    with db.transaction() as conn:
        if conn.value("SELECT owner FROM locks WHERE name = ?", (TICK_LOCK,)) != owner:
            return
        conn.execute(
            "UPDATE events SET status = 'pending', claimed_until = NULL WHERE status = 'claimed'"
        )


def load_mutes(db: Conn, now: float) -> list[Mute]:
    rows = db.execute(
        "SELECT id, source, type, match, until FROM mutes WHERE until IS NULL OR until > ?",
        (now,),
    ).fetchall()
    return [Mute(r[0], r[1], r[2], json.loads(r[3] or "{}"), r[4]) for r in rows]


def record(
    db: Conn,
    *,
    tick_id: int,
    priorities: dict[int, str],
    done: list[int],
    held: list[int],
    briefing: Briefing | None,
    now: float,
    owner: str,
) -> None:
    """Write the triage outcome and the briefing (with its deliveries) in one transaction."""
    with db.transaction() as conn:
        fence(conn, TICK_LOCK, owner)
        if briefing is not None:
            briefing.id = conn.value(
                "INSERT INTO briefings (tick_id, created_at, structure, text, targets,"
                " event_count, status) VALUES (?, ?, ?, ?, ?, ?, 'pending') RETURNING id",
                (
                    tick_id,
                    now,
                    json.dumps(to_structure(briefing)),
                    briefing.text,
                    json.dumps(briefing.targets),
                    len(briefing.event_ids),
                ),
            )
            conn.executemany(
                "INSERT INTO deliveries (briefing_id, target, status, attempts) VALUES (?, ?,"
                " 'pending', 0)",
                [(briefing.id, t) for t in dict.fromkeys(briefing.targets)],
            )
        for (priority, status, in_briefing), ids in outcomes(
            priorities, done, held, briefing.event_ids if briefing else []
        ).items():
            sets: list[str] = []
            params: list[str | int | None] = []
            if priority is not None:
                sets.append("priority = ?")
                params.append(priority)
            if status is not None:
                sets.append("status = ?, claimed_until = NULL")
                params.append(status)
            if in_briefing:
                sets.append("briefing_id = ?")
                params.append(briefing.id if briefing else None)
            # a status changes only on a claim (ours: the fence above); the rest as before
            where = " AND status = 'claimed'" if status is not None else ""
            conn.execute(
                f"UPDATE events SET {', '.join(sets)} WHERE id IN ({conn.ids}){where}",
                (*params, json.dumps(ids)),
            )


Outcome = tuple[str | None, str | None, bool]  # priority, new status, named by the briefing


def outcomes(
    priorities: dict[int, str], done: list[int], held: list[int], in_briefing: list[int]
) -> dict[Outcome, list[int]]:
    """The events grouped by everything ``record`` writes to them: one UPDATE per group
    writes each event row once, where a statement per column (and one per event for the
    priority) rewrote every row several times — on PostgreSQL each time a new row version."""
    status = {i: "done" for i in done} | {i: "pending" for i in held}
    named = set(in_briefing)
    groups: dict[Outcome, list[int]] = {}
    for i in sorted(set(priorities) | set(status) | named):
        key = (priorities.get(i), status.get(i), i in named)
        if key != (None, None, False):
            groups.setdefault(key, []).append(i)
    return groups


def load_briefing(db: Conn, briefing_id: int) -> Briefing:
    row = db.execute(
        "SELECT structure, text FROM briefings WHERE id = ?", (briefing_id,)
    ).fetchone()
    return from_structure(json.loads(row[0]), row[1], briefing_id)


def outstanding(db: Conn, briefing_id: int) -> list[tuple[int, str]]:
    return [
        (r[0], r[1])
        for r in db.execute(
            "SELECT id, target FROM deliveries WHERE briefing_id = ? AND status = 'pending'"
            " ORDER BY id",
            (briefing_id,),
        )
    ]


def record_delivery(
    db: Conn,
    delivery_id: int,
    error: str | None,
    ref: str | None,
    now: float,
    max_attempts: int,
) -> None:
    with db.transaction() as conn:
        if error is None:
            conn.execute(
                "UPDATE deliveries SET status = 'delivered', delivered_at = ?, ref = ?,"
                " attempts = attempts + 1, last_error = NULL WHERE id = ?",
                (now, ref, delivery_id),
            )
        else:
            conn.execute(
                "UPDATE deliveries SET attempts = attempts + 1, last_error = ?, status ="
                " CASE WHEN attempts + 1 >= ? THEN 'failed' ELSE 'pending' END WHERE id = ?",
                (error, max_attempts, delivery_id),
            )


def finish_briefing(db: Conn, briefing_id: int, owner: str) -> str:
    """Settle the briefing and its claimed events from its deliveries; the new status.

    All delivered → ``delivered`` and events ``done``. Some target still to retry →
    ``pending``, events back to ``pending`` with ``attempts + 1``. Every target settled but
    some failed → ``partial`` (events ``done``: someone got them) or ``failed`` (events
    ``failed``, listed and retryable).
    """
    with db.transaction() as conn:
        fence(conn, TICK_LOCK, owner)
        rows = conn.execute(
            "SELECT status, last_error FROM deliveries WHERE briefing_id = ?", (briefing_id,)
        ).fetchall()
        statuses = {r[0] for r in rows}
        error = "; ".join(r[1] for r in rows if r[1]) or None
        if statuses <= {"delivered"}:
            status, events, bump = "delivered", "done", 0
        elif "pending" in statuses:
            status, events, bump = "pending", "pending", 1
        elif "delivered" in statuses:
            status, events, bump = "partial", "done", 0
        else:
            status, events, bump = "failed", "failed", 1
        conn.execute("UPDATE briefings SET status = ? WHERE id = ?", (status, briefing_id))
        conn.execute(
            "UPDATE events SET status = ?, claimed_until = NULL, attempts = attempts + ?,"
            " last_error = ? WHERE briefing_id = ? AND status = 'claimed'",
            (events, bump, error, briefing_id),
        )
    return status
