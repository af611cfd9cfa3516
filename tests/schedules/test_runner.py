"""The scheduler's passes: what a due job posts, when it is late, retried, failed, recorded."""

from __future__ import annotations

import json
from datetime import datetime
from zoneinfo import ZoneInfo

from bothost.config import SchedulesConfig
from bothost.crosshost import lease
from bothost.schedules import add_job, get_job, list_jobs
from bothost.schedules.runner import SCHEDULES_LOCK, Scheduler
from tests.conftest import both_backends

ZURICH = "Europe/Zurich"
NOW = datetime(2026, 12, 8, 8, 59, tzinfo=ZoneInfo(ZURICH)).timestamp()
NINE = NOW + 60
ANA = "slack:U0123ANA"


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def scheduler(store, send, clock, run_check=None, **limits):
    return Scheduler(store, send, run_check, SchedulesConfig(**limits), lease_ttl=30, clock=clock)


def add(store, text="call Ana", **kw):
    kw.setdefault("at", None if "cron" in kw else NINE)
    kind = kw.pop("kind", "message")
    return store.call(
        lambda db: add_job(db, ANA, "slack:C0OPS", kind, text, tz=ZURICH, now=NOW, **kw)
    )


@both_backends
async def test_a_due_job_posts_once_and_is_done(store, recorder):
    job = add(store)
    clock = Clock(NOW)
    run = scheduler(store, recorder, clock)
    assert await run.fire_due() == []  # not yet due
    clock.now = NINE + 1
    fired = await run.fire_due()
    assert [(f.job_id, f.status, f.late) for f in fired] == [(job.id, "done", False)]
    assert recorder.sent == [("slack:C0OPS", "Reminder: call Ana")]
    assert await run.fire_due() == []  # done: not again
    assert len(recorder.sent) == 1
    calls = store.call(
        lambda db: db.query("SELECT session_id, tool, arguments, status FROM tool_calls")
    )
    assert calls == [
        {
            "session_id": f"schedule:{job.id}",
            "tool": "scheduled_job",
            "arguments": json.dumps(
                {"job": job.id, "kind": "message", "owner": ANA, "target": "slack:C0OPS"}
            ),
            "status": "ok",
        }
    ]


async def test_a_job_found_long_after_its_time_says_it_is_late(store, recorder):
    add(store)
    await scheduler(store, recorder, Clock(NINE + 3 * 3600)).fire_due()
    assert recorder.sent == [
        ("slack:C0OPS", "Reminder (late, bothost was not running at 09:00): call Ana")
    ]


async def test_a_repeating_job_fires_its_missed_moments_once_and_moves_on(store, recorder):
    job = add(store, cron="0 9 * * *")  # daily at 09:00; three days pass with no host
    clock = Clock(NINE + 3 * 86400 + 3600)
    fired = await scheduler(store, recorder, clock).fire_due()
    assert [f.status for f in fired] == ["scheduled"]
    assert len(recorder.sent) == 1 and "late" in recorder.sent[0][1]
    moved = store.call(lambda db: get_job(db, job.id))
    assert moved.next_run == NINE + 4 * 86400  # the next moment after now, not a missed one
    assert await scheduler(store, recorder, clock).fire_due() == []


async def test_a_failing_target_is_retried_then_the_job_fails_with_its_error(store, recorder):
    job = add(store)
    recorder.failing = True
    clock = Clock(NINE + 1)
    run = scheduler(store, recorder, clock, max_attempts=2)
    assert [f.status for f in await run.fire_due()] == ["scheduled"]
    assert await run.fire_due() == []  # waits RETRY_DELAY before trying again
    clock.now += 61
    assert [f.status for f in await run.fire_due()] == ["failed"]
    failed = store.call(lambda db: get_job(db, job.id))
    assert failed.attempts == 2 and "slack:C0OPS is down" in failed.last_error
    assert [j.status for j in store.call(lambda db: list_jobs(db))] == ["failed"]


async def test_a_check_posts_only_what_its_turn_notifies(store, recorder):
    quiet = add(store, text="is db-1's disk over 90%?", kind="check")
    loud = add(store, text="is db-2's disk over 90%?", kind="check")
    asked = []

    async def run_check(job):
        asked.append(job.id)
        return ["db-2 is at 95%"] if job.id == loud.id else []

    fired = await scheduler(store, recorder, Clock(NINE + 1), run_check).fire_due()
    assert asked == [quiet.id, loud.id]
    assert [(f.job_id, f.sent) for f in fired] == [(quiet.id, None), (loud.id, "db-2 is at 95%")]
    assert recorder.sent == [("slack:C0OPS", "db-2 is at 95%")]


async def test_a_check_whose_delivery_failed_resends_without_asking_again(store, recorder):
    add(store, text="disk?", kind="check")
    asked = []

    async def run_check(job):
        asked.append(job.id)
        return ["disk full"]

    clock = Clock(NINE + 1)
    recorder.failing = True
    await scheduler(store, recorder, clock, run_check).fire_due()
    recorder.failing, clock.now = False, clock.now + 61
    await scheduler(store, recorder, clock, run_check).fire_due()
    assert len(asked) == 1 and recorder.sent == [("slack:C0OPS", "disk full")]


@both_backends
async def test_nothing_fires_while_another_host_holds_the_lease(store, recorder):
    add(store)
    store.call(lambda db: lease.acquire(db, SCHEDULES_LOCK, "other:1:x", NINE, 600))
    run = Scheduler(store, recorder, None, SchedulesConfig(), lease_ttl=30, clock=Clock(NINE + 1))
    if store.dialect == "sqlite":
        # one host per SQLite file: a row left there is a dead process's, taken over
        assert len(await run.fire_due()) == 1
    else:
        assert await run.fire_due() == [] and recorder.sent == []
