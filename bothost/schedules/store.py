"""Scheduled jobs in the store (``schedule_jobs``, core:15): make, list, cancel, settle.

Plain functions of a :class:`~bothost.store.conn.Conn`, run on the store's thread, so the
CLI, the agent's tools, the offline commands and the dashboard share them and a running
host sees a job another process added at its next poll. The limits
(:class:`~bothost.config.SchedulesConfig`) are checked here, in the write transaction that
adds the job, so no caller can forget them. A job's ``next_run`` is the only clock the
scheduler reads: a once job's instant, a repeating job's next cron moment, or the time to
retry a failed attempt.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bothost.config import SchedulesConfig
from bothost.models import Address, AddressError
from bothost.schedules.errors import ScheduleError
from bothost.schedules.when import check_cron, next_cron, zone_named
from bothost.store.conn import Conn

MESSAGE, CHECK = "message", "check"
KINDS = (MESSAGE, CHECK)
SCHEDULED, DONE, FAILED, CANCELLED = "scheduled", "done", "failed", "cancelled"
MAX_TEXT = 4000  # characters of a reminder or a check's prompt: a chat message, not a file
RETRY_DELAY = 60.0  # seconds before a failed attempt is tried again
COLUMNS = (
    "id, owner, target, kind, text, at, cron, tz, status, attempts, last_error, created_at,"
    " next_run, last_fired_at, outbox"
)
Guard = Callable[[Conn], None]  # raises inside a transaction when this host may not write


@dataclass
class Job:
    """One scheduled job as stored; ``at`` for once, ``cron`` (in ``tz``) for repeating."""

    id: int
    owner: str  # platform-qualified: slack:U123, web:NAME, console:USER
    target: str  # an address as for tick.deliver_to: slack:C…, web:…, webhook:NAME, console:
    kind: str  # message (post the text) or check (an agent turn; post what it notifies)
    text: str
    tz: str
    status: str = SCHEDULED
    at: float | None = None
    cron: str | None = None
    attempts: int = 0
    last_error: str | None = None
    created_at: float = 0.0
    next_run: float | None = None
    last_fired_at: float | None = None
    outbox: list[str] | None = field(default=None, repr=False)  # a check's output, unsent

    @property
    def repeating(self) -> bool:
        return self.cron is not None

    def as_dict(self) -> dict[str, Any]:
        """The job as ``schedule list --json`` and the web dashboard show it."""
        keys = ("id", "owner", "target", "kind", "text", "at", "cron", "tz", "status")
        more = ("attempts", "last_error", "created_at", "next_run", "last_fired_at")
        return {k: getattr(self, k) for k in keys + more}


def from_row(row: dict[str, Any]) -> Job:
    outbox = json.loads(row["outbox"]) if row.get("outbox") else None
    return Job(**{**row, "outbox": outbox})


def add_job(
    db: Conn,
    owner: str,
    target: str,
    kind: str,
    text: str,
    *,
    at: float | None = None,
    cron: str | None = None,
    tz: str,
    limits: SchedulesConfig | None = None,
    now: float | None = None,
) -> Job:
    """Store a new job (exactly one of ``at`` and ``cron``); ScheduleError says what is
    wrong in one line (a past time, a bad target, a repeat too short, too many jobs)."""
    limits = limits or SchedulesConfig()
    now = time.time() if now is None else now
    _check_request(owner, target, kind, text, tz)
    if (at is None) == (cron is None):
        raise ScheduleError("give a time or a cron expression, not both or neither")
    if cron is not None:
        check_cron(cron, tz, limits.min_repeat, now)
        next_run = next_cron(cron, tz, now)
    else:
        assert at is not None
        if at <= now:
            raise ScheduleError("that time is in the past")
        next_run = at
    row = {
        "owner": owner,
        "target": target,
        "kind": kind,
        "text": text,
        "at": at,
        "cron": cron,
        "tz": tz,
        "status": SCHEDULED,
        "attempts": 0,
        "created_at": now,
        "next_run": next_run,
    }
    with db.transaction() as conn:
        count = conn.value(
            "SELECT COUNT(*) FROM schedule_jobs WHERE owner = ? AND status = ?", (owner, SCHEDULED)
        )
        if count >= limits.max_per_person:
            raise ScheduleError(
                f"{owner} has {count} scheduled jobs, the most allowed"
                " (schedules.max_per_person); cancel one first"
            )
        job_id = conn.insert("schedule_jobs", row, returning="id")
    return Job(id=int(job_id), **row)  # type: ignore[arg-type]


def _check_request(owner: str, target: str, kind: str, text: str, tz: str) -> None:
    if ":" not in owner:
        raise ScheduleError(f"the owner {owner!r} names no platform (slack:U…, web:NAME, …)")
    try:
        Address.parse(target)
    except AddressError:
        raise ScheduleError(
            f"not a target: {target!r} (slack:C…, web:NAME, webhook:NAME or console:)"
        ) from None
    if kind not in KINDS:
        raise ScheduleError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if not text.strip():
        raise ScheduleError("the text is empty")
    if len(text) > MAX_TEXT:
        raise ScheduleError(f"the text is {len(text)} characters; at most {MAX_TEXT}")
    zone_named(tz)


def list_jobs(db: Conn, owner: str | None = None, *, everything: bool = False) -> list[Job]:
    """Jobs in id order: ``owner``'s (None: everyone's); only scheduled and failed ones
    unless ``everything`` (done and cancelled too)."""
    where, params = [], []
    if owner is not None:
        where.append("owner = ?")
        params.append(owner)
    if not everything:
        where.append("status IN (?, ?)")
        params += [SCHEDULED, FAILED]
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    rows = db.query(f"SELECT {COLUMNS} FROM schedule_jobs{clause} ORDER BY id", params)
    return [from_row(r) for r in rows]


MAX_ID = 2**63 - 1  # the largest integer SQLite and PostgreSQL store: no job has a larger id


def get_job(db: Conn, job_id: int) -> Job | None:
    if not 0 < job_id <= MAX_ID:  # a number from outside (the page, the CLI, the model)
        return None
    row = db.one(f"SELECT {COLUMNS} FROM schedule_jobs WHERE id = ?", (job_id,))
    return from_row(row) if row else None


def cancel_job(db: Conn, job_id: int, by: str, *, admin: bool = False) -> Job:
    """Cancel job ``job_id`` for ``by`` (its owner, or anyone with ``admin``); the job as
    it was. ScheduleError when there is no such job, it is not theirs, or it is over."""
    with db.transaction() as conn:
        job = get_job(conn, job_id)
        if job is None or (job.owner != by and not admin):
            # another person's job is "not found" to them: ids say nothing of others' jobs
            raise ScheduleError(f"no job #{job_id} of yours (bothost schedule list)")
        if job.status in (DONE, CANCELLED):
            raise ScheduleError(f"job #{job_id} is {job.status} already")
        conn.execute(
            "UPDATE schedule_jobs SET status = ?, cancelled_by = ?, next_run = NULL WHERE id = ?",
            (CANCELLED, by, job_id),
        )
    return job


def next_due(db: Conn) -> float | None:
    """When the earliest scheduled job is due (one probe of the due index)."""
    value = db.value("SELECT MIN(next_run) FROM schedule_jobs WHERE status = ?", (SCHEDULED,))
    return None if value is None else float(value)


def due_jobs(db: Conn, now: float, limit: int) -> list[Job]:
    rows = db.query(
        f"SELECT {COLUMNS} FROM schedule_jobs WHERE status = ? AND next_run <= ?"
        " ORDER BY next_run, id LIMIT ?",
        (SCHEDULED, now, limit),
    )
    return [from_row(r) for r in rows]


def save_outbox(db: Conn, job: Job, texts: list[str], guard: Guard) -> None:
    """Keep a check's output until it is delivered (written only by the lease's holder)."""
    with db.transaction() as conn:
        guard(conn)
        conn.execute(
            "UPDATE schedule_jobs SET outbox = ? WHERE id = ? AND status = ?",
            (json.dumps(texts, ensure_ascii=False), job.id, SCHEDULED),
        )


def record_fired(db: Conn, job: Job, now: float) -> None:
    """The job reached its target (or had nothing to say): a once job is done, a repeating
    one waits for its next moment after ``now`` — a missed run of it fires once, not once
    per moment missed. Recorded whoever holds the lease: the delivery is a fact."""
    next_run = next_cron(job.cron, job.tz, now) if job.cron else None
    status = SCHEDULED if job.cron else DONE
    db.execute(
        "UPDATE schedule_jobs SET status = ?, next_run = ?, last_fired_at = ?, attempts = 0,"
        " last_error = NULL, outbox = NULL WHERE id = ? AND status = ?",
        (status, next_run, now, job.id, SCHEDULED),
    )


def record_failure(db: Conn, job: Job, error: str, now: float, max_attempts: int) -> str:
    """One failed attempt: tried again after :data:`RETRY_DELAY`, or ``failed`` with the
    error after ``max_attempts``; the job's new status."""
    attempts = job.attempts + 1
    status = FAILED if attempts >= max_attempts else SCHEDULED
    next_run = None if status == FAILED else now + RETRY_DELAY
    db.execute(
        "UPDATE schedule_jobs SET status = ?, attempts = ?, last_error = ?, next_run = ?"
        " WHERE id = ? AND status = ?",
        (status, attempts, error[:500], next_run, job.id, SCHEDULED),
    )
    return status
