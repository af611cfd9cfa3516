"""The scheduler: fires due jobs on the leading host, at least once, each recorded after.

:class:`Scheduler` polls the due index every :data:`POLL` seconds (one index probe), so a
job another process added (``bothost schedule add``) fires within a few seconds of its time
with no signal between processes. Only the leader fires (:mod:`bothost.crosshost.leadership`),
and each pass takes the ``schedules`` lease (:mod:`bothost.crosshost.lease`, the tick's
pattern): its owner id fences every send, so a leader that stalled past the lease sends
nothing more, and on PostgreSQL a SIGKILLed leader's advisory lock is dropped at once, so
the next leader takes the lease and fires the job the dead one left — with the same id.

The order makes the guarantee the briefings': a job is settled (``done``, or its next cron
moment) only after its target accepted the text, so a crash between send and record sends
it again (at least once). A check's output is stored before it is sent, so a retry resends
it without asking the model again. A job found due more than :data:`LATE_AFTER` after its
time says so ("late, bothost was not running at 09:00"), and a repeating job fires its
missed moment once, then moves to its next moment after now.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bothost.config import SchedulesConfig
from bothost.crosshost import lease
from bothost.events.delivery import DELIVERY_TIMEOUT
from bothost.events.faults import kill_point
from bothost.models import Briefing
from bothost.schedules import store as jobs
from bothost.schedules.store import CHECK, Job
from bothost.schedules.when import local_time
from bothost.store.conn import SQLITE

logger = logging.getLogger(__name__)

SCHEDULES_LOCK = "schedules"
POLL = 2.0  # seconds between looks at the due index: a job fires within 5 s of its time
LATE_AFTER = 60.0  # a job found due this much after its time was missed, and says so
BATCH = 100  # due jobs one pass fires; the rest come in the next pass
RENEWALS_PER_LEASE = 3
TITLE_LIMIT = 150  # Slack's header block; the whole text goes in the message as well
HISTORY_TOOL = "scheduled_job"  # the tool name a fire is recorded under in tool_calls

Send = Callable[[str, Briefing], Awaitable[Any]]
RunCheck = Callable[[Job], Awaitable[list[str]]]
Clock = Callable[[], float]


@dataclass
class Fired:
    """What one fire of a job did: ``sent`` text (None: a check with nothing to say) or
    ``error``, and the job's status after."""

    job_id: int
    status: str
    sent: str | None = None
    error: str | None = None
    late: bool = False


def message_text(job: Job, texts: list[str], late_since: float | None, now: float) -> str | None:
    """The line a job posts; None when a check had nothing to say."""
    body = "\n".join(t for t in texts if t.strip())
    if not body:
        return None
    late = ""
    if late_since is not None:
        late = f"late, bothost was not running at {local_time(late_since, job.tz, now)}"
    if job.kind == CHECK:
        return f"({late}) {body}" if late else body
    return f"Reminder ({late}): {body}" if late else f"Reminder: {body}"


def as_briefing(job: Job, text: str) -> Briefing:
    """``text`` in the shape every platform delivers (``send_briefing``, as the tick's)."""
    first, _, rest = text.partition("\n")
    title = first if len(first) <= TITLE_LIMIT else first[: TITLE_LIMIT - 1] + "…"
    footer = rest if len(first) <= TITLE_LIMIT else text
    # one key per run of the job, kept by its retries and by a resend after a crash (only a
    # recorded fire moves last_fired_at): a webhook receiver dedupes by it
    key = f"job_{job.id}_{int(job.last_fired_at or job.created_at)}"
    return Briefing(title=title, items=[], text=text, targets=[job.target], footer=footer, key=key)


class Scheduler:
    """Fires due jobs while this host leads; one pass at a time."""

    def __init__(
        self,
        store: Any,
        send: Send,
        run_check: RunCheck | None,
        limits: SchedulesConfig,
        *,
        lease_ttl: float,
        clock: Clock = time.time,
        leading: Callable[[], bool] | None = None,
        poll: float = POLL,
    ) -> None:
        self.store, self.send, self.run_check = store, send, run_check
        self.limits, self.lease_ttl, self.clock, self.poll = limits, lease_ttl, clock, poll
        self.leading = leading or (lambda: True)
        self._woken = asyncio.Event()

    def wake(self) -> None:
        """Look at the due jobs now (this host just became the leader)."""
        self._woken.set()

    async def run_forever(self) -> None:
        while True:
            if self.leading():
                try:
                    await self.fire_due()
                except Exception:  # one failed pass must not end the scheduler
                    logger.exception("firing scheduled jobs failed")
            try:
                async with asyncio.timeout(self.poll):
                    await self._woken.wait()
            except TimeoutError:
                pass
            self._woken.clear()

    async def fire_due(self) -> list[Fired]:
        """Fire every job due now, under the lease; [] when none is due or another host
        holds the lease."""
        now = self.clock()
        due = await self.store.run(jobs.next_due)
        if due is None or due > now:
            return []  # the common case: a read, no write
        owner = lease.new_owner()
        force = self.store.dialect == SQLITE  # one host per file: a dead holder's row is ours
        took = await self.store.run(
            lambda db: lease.acquire(db, SCHEDULES_LOCK, owner, now, self.lease_ttl, force=force)
        )
        if not took:
            return []

        async def renew() -> None:
            if not await self.store.run(
                lambda db: lease.renew(db, SCHEDULES_LOCK, owner, self.clock(), self.lease_ttl)
            ):
                raise lease.LeaseLostError("another host took the schedules lease over")

        keeper = asyncio.create_task(self._keep_alive(renew))
        try:
            found = await self.store.run(lambda db: jobs.due_jobs(db, now, BATCH))
            return [await self._fire(job, owner, renew, now) for job in found]
        except lease.LeaseLostError as exc:
            logger.warning("scheduled jobs stopped: %s", exc)  # the new holder fires the rest
            return []
        finally:
            keeper.cancel()
            await self.store.run(lambda db: lease.release(db, SCHEDULES_LOCK, owner))

    async def _keep_alive(self, renew: Callable[[], Awaitable[None]]) -> None:
        while True:
            await asyncio.sleep(self.lease_ttl / RENEWALS_PER_LEASE)
            try:
                await renew()
            except lease.LeaseLostError:
                return
            except Exception:
                logger.exception("renewing the schedules lease failed")

    async def _fire(
        self, job: Job, owner: str, renew: Callable[[], Awaitable[None]], now: float
    ) -> Fired:
        started = self.clock()
        missed = job.attempts == 0 and job.next_run is not None and now - job.next_run > LATE_AFTER
        late_since = job.next_run if missed else None
        text, error = None, None
        try:
            texts = await self._texts(job, owner)
            text = message_text(job, texts, late_since, self.clock())
            if text is not None:
                await renew()  # the fence: only the lease's holder sends
                kill_point("job-sending")
                async with asyncio.timeout(DELIVERY_TIMEOUT):
                    await self.send(job.target, as_briefing(job, text))
                kill_point("job-sent")
        except lease.LeaseLostError:
            raise
        except TimeoutError:
            error = f"TimeoutError: no answer within {DELIVERY_TIMEOUT:g} s"
        except Exception as exc:  # one job failing must not stop the others
            error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            logger.warning("scheduled job %s to %s failed: %s", job.id, job.target, error)
        status = await self.store.run(lambda db: self._settle(db, job, text, error, started))
        return Fired(job.id, status, None if error else text, error, missed)

    async def _texts(self, job: Job, owner: str) -> list[str]:
        if job.kind != CHECK:
            return [job.text]
        if job.outbox is not None:
            return job.outbox  # the turn ran before an attempt that did not deliver
        if self.run_check is None:
            raise RuntimeError("no model is configured to run checks")
        texts = await self.run_check(job)
        await self.store.run(
            lambda db: jobs.save_outbox(
                db, job, texts, lambda conn: lease.fence(conn, SCHEDULES_LOCK, owner)
            )
        )
        return texts

    def _settle(
        self, db: Any, job: Job, text: str | None, error: str | None, started: float
    ) -> str:
        now = self.clock()
        with db.transaction() as conn:
            if error is None:
                jobs.record_fired(conn, job, now)
            else:
                jobs.record_failure(conn, job, error, now, self.limits.max_attempts)
            record_history(conn, job, text, error, started, now)
            status = conn.value("SELECT status FROM schedule_jobs WHERE id = ?", (job.id,))
        kill_point("job-recorded")
        return str(status)


def record_history(
    db: Any, job: Job, text: str | None, error: str | None, started: float, now: float
) -> None:
    """The fire as a row of the tool-call history, under the job's own session id."""
    db.insert(
        "tool_calls",
        {
            "session_id": f"schedule:{job.id}",
            "call_id": f"job-{job.id}",
            "tool": HISTORY_TOOL,
            "arguments": json.dumps(
                {"job": job.id, "kind": job.kind, "owner": job.owner, "target": job.target},
                ensure_ascii=False,
            ),
            "result": error or text or "nothing to say",
            "is_error": int(error is not None),
            "error": error,
            "status": "error" if error else "ok",
            "duration_ms": (now - started) * 1000,
            "started_at": started,
        },
    )
