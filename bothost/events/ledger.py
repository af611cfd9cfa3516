"""The state transitions of events, briefings and deliveries, as store-thread functions.

Every function takes the store's :class:`~bothost.store.Conn` and runs on its thread, each
step in its own short transaction so a crash leaves a state the next tick understands. The
steps that decide (claim, record, release, settle) take the tick's lease owner and check it
in their transaction (:func:`bothost.crosshost.lease.fence`): a tick whose lease was taken over
raises :class:`~bothost.crosshost.lease.LeaseLostError` instead of writing.

* ``claim``: no event row is written. Only the lease holder claims, decides and sends, and
  every deciding step checks the lease in its transaction, so the lease *is* the claim: the
  pending events the holder read are its own until it settles them or loses the lease,
  and a tick that dies leaves them ``pending`` for the next holder, with nothing to expire.
  (Marking each row ``claimed`` and back again cost PostgreSQL a row version and an index
  entry per event per tick.) Snoozed events whose time has come return to ``pending``; rows
  an older bothost left ``claimed`` do too. Pending events that belong to a briefing with
  deliveries still outstanding are claimed as a *retry* of that same briefing, not triaged
  again, so no target gets a second, different copy; a briefing whose tick died between
  recording it and settling it (so none of its events name it yet) first adopts its
  still-pending events from the ids it stored.
* ``record``: priorities are written, dropped and muted events are ``done``, held ones
  (quiet hours) keep ``pending`` with their priority, and the briefing with one
  ``deliveries`` row per target is stored before anything is sent — one UPDATE per distinct
  outcome. The briefing's own events are not written here but when it is settled.
* ``record_delivery`` / ``finish_briefing``: only a delivery recorded as delivered lets the
  briefing's events become ``done`` (with their priority and the briefing's id, in the one
  write each gets in a tick); a failed one leaves them ``pending``, naming the briefing,
  with ``attempts + 1``, and a target that failed ``max_attempts`` times is ``failed``.

Each event row is therefore written at most once per tick, on either backend: by ``record``
(dropped, muted, held) or by ``finish_briefing`` (shown).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from bothost.crosshost.lease import TICK_LOCK, fence
from bothost.events import CLAIM_ORDER
from bothost.events.queue import decode_payload
from bothost.events.render import from_structure, to_structure
from bothost.events.triage import Mute, QueuedEvent
from bothost.models import Briefing
from bothost.store.conn import SQLITE, Conn


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


def claim(db: Conn, now: float, limit: int, owner: str) -> Claim:
    """Up to ``limit`` pending events (and the retries) for the tick ``owner`` runs; the
    lease it holds is the claim, so nothing is written to the events it reads."""
    result = Claim()
    with db.transaction() as conn:
        fence(conn, TICK_LOCK, owner)
        # an older bothost marked the events it claimed; the lease is ours, so its tick ended
        conn.execute(
            "UPDATE events SET status = 'pending', claimed_until = NULL WHERE status = 'claimed'"
        )
        # before snoozed events return: one snoozed out of a briefing stays out of it
        adopt_unsettled(conn)
        conn.execute(
            "UPDATE events SET status = 'pending', snoozed_until = NULL"
            " WHERE status = 'snoozed' AND snoozed_until <= ?",
            (now,),
        )
        # a briefing waiting for a retry whose events were all acknowledged or snoozed
        # meanwhile has nothing left to say: it is not sent again
        conn.execute(
            f"UPDATE deliveries SET status = 'cancelled' WHERE status = 'pending'"
            f" AND briefing_id IN ({ORPHANS})"
        )
        conn.execute(f"UPDATE briefings SET status = 'cancelled' WHERE id IN ({ORPHANS})")
        for event_id, briefing_id in conn.execute(RETRIES):
            result.retries.setdefault(briefing_id, []).append(event_id)
        rows = conn.execute(fresh(conn.dialect), (limit,)).fetchall()
        result.fresh = [
            QueuedEvent(r[0], r[1], r[2], decode_payload(r[3]), r[4], r[5]) for r in rows
        ]
    return result


# pending briefings none of whose pending events name them: settled for a retry and then
# acknowledged or snoozed away, or never settled (their tick died after recording them)
ORPHANS = (
    "SELECT id FROM briefings b WHERE status = 'pending' AND NOT EXISTS"
    " (SELECT 1 FROM events e WHERE e.briefing_id = b.id AND e.status = 'pending')"
)
# an event that no briefing waiting for a retry names: triaged afresh
UNNAMED = (
    "(briefing_id IS NULL OR briefing_id NOT IN (SELECT id FROM briefings WHERE status ="
    " 'pending'))"
)
# the events of briefings waiting for a retry, read from the few pending briefings to their
# events: SQLite takes a CROSS JOIN's tables in the order written, where with a plain JOIN
# it walked every pending event (held ones too) each tick
RETRIES = (
    "SELECT e.id, e.briefing_id FROM briefings b CROSS JOIN events e"
    " WHERE b.status = 'pending' AND e.briefing_id = b.id AND e.status = 'pending'"
    " ORDER BY e.id"
)


def fresh(dialect: str) -> str:
    """The query for the events a tick triages afresh, read along the events_claim index
    (held low ones last), so a tick reads no more than ``limit`` of them and never sorts
    all pending rows. Without statistics SQLite's planner prefers events_status's equality
    probe plus a sort to the partial index, so it is told which index to use (and refuses
    the query, rather than sorting, if the index no longer fits it)."""
    hint = " INDEXED BY events_claim" if dialect == SQLITE else ""
    return (
        f"SELECT id, source, type, payload, received_at, attempts FROM events{hint}"
        f" WHERE status = 'pending' AND {UNNAMED} ORDER BY {CLAIM_ORDER} LIMIT ?"
    )


def pending(db: Conn, now: float, limit: int) -> list[QueuedEvent]:
    """The events the next tick would triage afresh, read without claiming anything (for
    ``bothost tick --dry-run``): pending ones (and snoozed ones whose time has come) that
    no briefing waiting for a retry names, in the order :func:`claim` takes them."""
    rows = db.execute(
        "SELECT id, source, type, payload, received_at, attempts FROM events"
        " WHERE (status IN ('pending', 'claimed')"
        " OR (status = 'snoozed' AND snoozed_until <= ?))"
        f" AND {UNNAMED}"
        f" ORDER BY {CLAIM_ORDER} LIMIT ?",
        (now, limit),
    ).fetchall()
    return [QueuedEvent(r[0], r[1], r[2], decode_payload(r[3]), r[4], r[5]) for r in rows]


def adopt_unsettled(conn: Conn) -> None:
    """Name each orphaned briefing on the pending events it stored that no other pending
    briefing names: a briefing whose tick died (or lost the lease) between ``record`` and
    ``finish_briefing`` is then retried like any other, its delivered targets not sent
    again. A briefing that was settled names its pending events already, so those left
    unnamed were snoozed out of it (and are not pending yet: snoozes return after this)."""
    for briefing_id, structure in conn.execute(
        f"SELECT id, structure FROM briefings WHERE id IN ({ORPHANS})"
    ).fetchall():
        conn.execute(
            f"UPDATE events SET briefing_id = ? WHERE status = 'pending' AND {UNNAMED}"
            f" AND id IN ({conn.ids})",
            (briefing_id, json.dumps(json.loads(structure)["event_ids"])),
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
    briefing: Briefing | None,
    now: float,
    owner: str,
) -> None:
    """Write the triage outcome and the briefing (with its deliveries) in one transaction:
    ``done`` events (dropped, muted) and the priorities of the events the briefing does not
    show (held for quiet hours); the shown ones are written once, when it is settled."""
    with db.transaction() as conn:
        fence(conn, TICK_LOCK, owner)
        shown: set[int] = set()
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
            shown = set(briefing.event_ids) - set(done)
        named = [i for i in briefing.event_ids if i not in shown] if briefing else []
        for (priority, status, in_briefing), ids in outcomes(
            {i: p for i, p in priorities.items() if i not in shown}, done, named
        ).items():
            update_events(
                conn,
                ids,
                priority=priority,
                status=status,
                briefing_id=briefing.id if in_briefing and briefing else None,
            )


def update_events(
    conn: Conn,
    ids: list[int],
    *,
    priority: str | None = None,
    status: str | None = None,
    briefing_id: int | None = None,
    delivery: tuple[int, str | None] | None = None,
) -> None:
    """One UPDATE of the pending events among ``ids``, setting each column given;
    ``delivery`` (attempts to add, the last error) is a briefing's outcome. Only pending
    rows are written: an event acknowledged or snoozed while the tick ran keeps what the
    person did."""
    sets: list[str] = []
    params: list[str | int | None] = []
    if priority is not None:
        sets.append("priority = ?")
        params.append(priority)
    if status is not None:
        sets.append("status = ?")
        params.append(status)
    if delivery is not None:
        sets.append("attempts = attempts + ?, last_error = ?")
        params.extend(delivery)
    if briefing_id is not None:
        sets.append("briefing_id = ?")
        params.append(briefing_id)
    if sets:
        conn.execute(
            f"UPDATE events SET {', '.join(sets)} WHERE status = 'pending' AND id IN ({conn.ids})",
            (*params, json.dumps(ids)),
        )


Outcome = tuple[str | None, str | None, bool]  # priority, new status, named by the briefing


def outcomes(
    priorities: Mapping[int, str], done: list[int], in_briefing: list[int]
) -> dict[Outcome, list[int]]:
    """The events grouped by everything one step writes to them: one UPDATE per group
    writes each event row once, where a statement per column (and one per event for the
    priority) rewrote every row several times — on PostgreSQL each time a new row version."""
    status = dict.fromkeys(done, "done")
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


def finish_briefing(
    db: Conn, briefing_id: int, owner: str, shown: Mapping[int, str | None] | None = None
) -> str:
    """Settle the briefing and its events from its deliveries; the new status.

    All delivered → ``delivered`` and events ``done``. Some target still to retry →
    ``pending``, events stay ``pending`` with ``attempts + 1``. Every target settled but
    some failed → ``partial`` (events ``done``: someone got them) or ``failed`` (events
    ``failed``, listed and retryable). The events are those naming the briefing (a retry)
    and, for the briefing a tick has just made, ``shown`` (event id → priority), which are
    named by it now, in the same write.
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
            "UPDATE events SET status = ?, attempts = attempts + ?, last_error = ?"
            " WHERE briefing_id = ? AND status = 'pending'",
            (events, bump, error, briefing_id),
        )
        for (priority, _, _), ids in outcomes(
            {i: p for i, p in (shown or {}).items() if p is not None}, [], list(shown or ())
        ).items():
            update_events(
                conn,
                ids,
                priority=priority,
                status=events,
                briefing_id=briefing_id,
                delivery=(bump, error),
            )
    return status
