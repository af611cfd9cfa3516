"""Making, listing and cancelling jobs, and the limits each one is checked against."""

from __future__ import annotations

import pytest

from bothost.config import SchedulesConfig
from bothost.schedules import ScheduleError, add_job, cancel_job, list_jobs
from bothost.schedules.store import MAX_TEXT
from tests.conftest import both_backends

pytestmark = both_backends
NOW = 1_800_000_000.0
ANA = "slack:U0123ANA"


def add(db, owner=ANA, text="call Ana", **kw):
    kw.setdefault("tz", "Europe/Zurich")
    if "cron" not in kw:
        kw.setdefault("at", NOW + 600)
    return add_job(
        db, owner, kw.pop("target", "slack:C0OPS"), kw.pop("kind", "message"), text, now=NOW, **kw
    )


def test_jobs_are_stored_listed_per_owner_and_cancelled_by_their_owner(store):
    a = store.call(lambda db: add(db))
    b = store.call(lambda db: add(db, owner="web:bob", cron="0 9 * * 1"))
    assert b.next_run is not None and b.next_run > NOW
    assert [j.id for j in store.call(lambda db: list_jobs(db, ANA))] == [a.id]
    assert [j.id for j in store.call(lambda db: list_jobs(db))] == [a.id, b.id]
    with pytest.raises(ScheduleError, match=f"no job #{b.id} of yours"):
        store.call(lambda db: cancel_job(db, b.id, ANA))
    store.call(lambda db: cancel_job(db, a.id, ANA))
    store.call(lambda db: cancel_job(db, b.id, "console:root", admin=True))
    assert store.call(lambda db: list_jobs(db)) == []
    statuses = [j.status for j in store.call(lambda db: list_jobs(db, everything=True))]
    assert statuses == ["cancelled", "cancelled"]
    with pytest.raises(ScheduleError, match="cancelled already"):
        store.call(lambda db: cancel_job(db, a.id, ANA))


def test_a_person_has_at_most_max_per_person_scheduled_jobs(store):
    limits = SchedulesConfig(max_per_person=2)
    for _ in range(2):
        store.call(lambda db: add(db, limits=limits))
    with pytest.raises(ScheduleError, match="2 scheduled jobs, the most allowed"):
        store.call(lambda db: add(db, limits=limits))
    store.call(lambda db: add(db, owner="web:bob", limits=limits))  # someone else still may


def test_requests_outside_the_limits_are_refused_in_one_line(store):
    cases = [
        ({"cron": "*/2 * * * *"}, "shortest repeat is 5 min"),
        ({"at": NOW - 1}, "in the past"),
        ({"text": "x" * (MAX_TEXT + 1)}, f"at most {MAX_TEXT}"),
        ({"text": "  "}, "empty"),
        ({"target": "ops"}, "not a target"),
        ({"kind": "poem"}, "kind must be"),
        ({"owner": "U0123ANA"}, "names no platform"),
        ({"tz": "Nowhere/Town"}, "time zone"),
    ]
    for kw, problem in cases:
        with pytest.raises(ScheduleError, match=problem) as caught:
            store.call(lambda db, kw=kw: add(db, **kw))
        assert "\n" not in str(caught.value)
    assert store.call(lambda db: list_jobs(db, everything=True)) == []


@pytest.mark.parametrize("job_id", [0, -1, 2**63, 10**30])
def test_an_id_no_job_can_have_is_not_found(store, job_id):
    """Found by the web fuzz test: a huge id reached SQLite and failed the request (500)."""
    with pytest.raises(ScheduleError, match=f"no job #{job_id} of yours"):
        store.call(lambda db: cancel_job(db, job_id, ANA, admin=True))
