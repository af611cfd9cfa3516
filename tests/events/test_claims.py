"""Events sent with a once-only id (a webhook's ``webhook-id``): the id's claim and the event
are written in one transaction of the queue's group commit, on both backends.

A 2xx to a webhook sender means the event is committed and the id recorded; these check the
queue's half of that: every claimed event of a burst is committed in the burst's shared
transaction, an id claimed before (even earlier in the same batch) is a duplicate and queues
nothing, a row that cannot be stored leaves its id unclaimed and its neighbours committed,
and a failure of the store claims nothing.
"""

from __future__ import annotations

import asyncio

from bothost.api import EventRejectedError, Receipt
from bothost.models import Event
from tests.conftest import both_backends
from tests.helpers import ingest_once, ingest_one
from tests.store_faults import refuse_disk_events

pytestmark = both_backends

T0 = 1_800_000_000.0


def hook(n: int, **payload) -> Event:
    return Event("ops", "alert", {"summary": f"alert {n}", **payload}, received_at=T0 + n)


def rows(store, table: str) -> int:
    return store.call(lambda db: db.value(f"SELECT count(*) FROM {table}"))


def counting(store) -> list:
    """Record every job the store thread is given (``run`` submits one too)."""
    jobs: list = []
    original = store.submit

    def submit(fn):
        jobs.append(fn)
        return original(fn)

    store.submit = submit
    return jobs


async def test_concurrent_claimed_events_share_one_transaction(queue, store):
    jobs = counting(store)
    receipts = await asyncio.gather(*(ingest_once(queue, hook(n), f"msg_{n}") for n in range(200)))
    assert all(isinstance(r, Receipt) and r.event_id and not r.duplicate for r in receipts)
    assert len({r.event_id for r in receipts}) == 200
    assert len(jobs) <= 2  # the claims and the events in the burst's group commit(s)
    assert rows(store, "events") == 200 and rows(store, "webhook_ids") == 200
    keys = store.call(lambda db: {r[0] for r in db.execute("SELECT dedupe_key FROM events")})
    assert keys == {f"msg_{n}" for n in range(200)}


async def test_a_replay_in_the_same_batch_as_its_original_is_stored_once(queue, store):
    jobs = counting(store)
    first, again, other = await asyncio.gather(
        ingest_once(queue, hook(1), "msg_same"),
        ingest_once(queue, hook(2), "msg_same"),  # a retry with a changed body: still the id
        ingest_once(queue, hook(3), "msg_other"),
    )
    assert len(jobs) == 1  # all three in one batch
    assert first.event_id and not first.duplicate
    assert again == Receipt(duplicate=True)
    assert other.event_id and not other.duplicate
    assert rows(store, "events") == 2 and rows(store, "webhook_ids") == 2
    assert await ingest_once(queue, hook(4), "msg_same") == Receipt(duplicate=True)
    assert rows(store, "events") == 2


async def test_an_event_queued_without_its_claim_is_a_duplicate(queue, store):
    """An event queued before its id was recorded (a crash in older versions, or an id
    pruned while its event is still inside the dedupe window) is not queued again."""
    assert await ingest_one(queue, Event("ops", "alert", {}, T0, dedupe_key="msg_old"))
    assert await ingest_once(queue, hook(1), "msg_old") == Receipt(duplicate=True)
    assert rows(store, "events") == 1
    assert rows(store, "webhook_ids") == 1  # recorded now, so the next retry stops early


async def test_a_bad_row_fails_alone_and_leaves_its_id_unclaimed(queue, store):
    jobs = counting(store)
    bad = Event("ops", "event/\ud800", {"id": "x"}, T0)  # a lone surrogate: not storable
    outcomes = await asyncio.gather(
        *(ingest_once(queue, hook(n), f"msg_{n}") for n in range(50)),
        ingest_once(queue, bad, "msg_bad"),
        *(ingest_once(queue, hook(n), f"msg_{n}") for n in range(50, 100)),
        return_exceptions=True,
    )
    refused = outcomes.pop(50)
    assert isinstance(refused, EventRejectedError), refused
    assert all(isinstance(r, Receipt) and r.event_id for r in outcomes), outcomes
    assert len(jobs) <= 2
    assert rows(store, "events") == 100 and rows(store, "webhook_ids") == 100
    # the sender fixes the event and retries with the same id: it goes through
    fixed = await ingest_once(queue, Event("ops", "event/fixed", {"id": "x"}, T0), "msg_bad")
    assert fixed.event_id and not fixed.duplicate


async def test_a_store_failure_fails_the_batch_and_claims_nothing(queue, store):
    store.call(refuse_disk_events)
    disk = Event("disk", "alert", {"id": "1"}, T0)
    outcomes = await asyncio.gather(
        ingest_once(queue, hook(1), "msg_1"),
        ingest_once(queue, disk, "msg_disk"),
        ingest_once(queue, hook(2), "msg_2"),
        return_exceptions=True,
    )
    assert all(isinstance(o, Exception) and not isinstance(o, EventRejectedError) for o in outcomes)
    assert rows(store, "events") == 0 and rows(store, "webhook_ids") == 0
    retried = await ingest_once(queue, hook(1), "msg_1")  # the sender's retry, later
    assert retried.event_id and not retried.duplicate
