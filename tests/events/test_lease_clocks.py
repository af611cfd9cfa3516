"""The tick lease when wall clocks jump: two tick runners on one store (two hosts, or a host
and ``bothost tick``), each with an injected clock.

A forward jump bigger than ``tick.lease`` makes a live holder's lease look expired, so the
other runner takes the tick over mid-way: the runner that lost it must not deliver anything
more (its lease's owner is the fencing token every step checks), so no target gets a
briefing twice. A backward jump (a VM restored, a clock corrected) must not hold a dead
holder's lease for as long as the jump: at most one more lease.
"""

from __future__ import annotations

import asyncio

from bothost.events import lease
from bothost.events.tick import run_tick
from bothost.models import Event
from bothost.store import Store, core_migrations
from tests.conftest import both_backends

pytestmark = both_backends

T0 = 1_800_000_000.0
WAIT = 10.0  # seconds a test waits for the paused tick to reach its pause (a bound, not a sleep)


class Clock:
    """A wall clock the test sets and jumps."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_a_tick_whose_lease_was_taken_after_a_forward_jump_delivers_nothing_more(
    store_target, store, queue, config, recorder
):
    from bothost.events import events_migrations

    clock = Clock(T0)
    other = Store(store_target, [*core_migrations(), *events_migrations()])  # a second host
    try:
        await queue.ingest(Event("gmail", "event/new_email", {"id": "m", "summary": "hi"}))
        paused, resume = asyncio.Event(), asyncio.Event()

        async def slow_first(target, briefing):  # the first runner's first send hangs a while
            if not paused.is_set():
                paused.set()
                await resume.wait()
            return await recorder(target, briefing)

        first = asyncio.create_task(run_tick(store, config, slow_first, clock=clock))
        async with asyncio.timeout(WAIT):
            await paused.wait()
        clock.now += config.lease + 1  # the clock jumps past the first runner's lease
        second = await run_tick(other, config, recorder, clock=clock)
        assert second.status == "ok"  # took the tick over and sent the waiting briefing
        resume.set()
        async with asyncio.timeout(WAIT):
            result = await first
        sent = [target for target, _ in recorder.sent]
        hung, after = config.deliver_to  # the send in flight at the jump went out twice:
        assert sent.count(hung) == 2  # nothing can call it back; every later one only once
        assert sent.count(after) == 1
        assert result.status == "lost"
        states = store.call(lambda db: db.execute("SELECT status FROM events").fetchall())
        assert states == [("done",)]
        briefings = store.call(lambda db: db.execute("SELECT status FROM briefings").fetchall())
        assert briefings == [("delivered",)]
    finally:
        other.close()


async def test_after_a_backward_jump_a_dead_holders_lease_is_held_one_lease_at_most(
    store, queue, config, recorder
):
    clock = Clock(T0)
    # a holder that died mid-tick (SIGKILL) left its row, written before the clock went back
    assert store.call(lambda db: lease.acquire(db, lease.TICK_LOCK, "h:1:dead", T0, config.lease))
    await queue.ingest(Event("gmail", "event/new_email", {"id": "m", "summary": "hi"}))
    clock.now = T0 - 3600  # the clock is set back an hour
    first = await run_tick(store, config, recorder, clock=clock)
    if first.status == "busy":  # SQLite: the row is the only authority; PostgreSQL took it
        clock.now += config.lease + 1  # one lease later, not an hour
        assert (await run_tick(store, config, recorder, clock=clock)).status == "ok"
    assert sorted(target for target, _ in recorder.sent) == sorted(config.deliver_to)


async def test_a_holder_whose_clock_goes_back_does_not_shorten_its_lease(store, config):
    assert store.call(lambda db: lease.acquire(db, lease.TICK_LOCK, "h:1:a", T0, config.lease))
    # renewing at a reading an hour earlier keeps the expiry the others were promised
    assert store.call(lambda db: lease.renew(db, lease.TICK_LOCK, "h:1:a", T0 - 3600, config.lease))
    assert store.call(lambda db: lease.holder(db, lease.TICK_LOCK, T0 + 1)) == "h:1:a"
    assert not store.call(
        lambda db: lease.acquire(db, lease.TICK_LOCK, "h:2:b", T0 + 1, config.lease)
    )


async def test_a_runner_that_lost_the_lease_cannot_renew_it(store, config):
    assert store.call(lambda db: lease.acquire(db, lease.TICK_LOCK, "h:1:a", T0, config.lease))
    later = T0 + config.lease + 1  # expired: taken over
    assert store.call(lambda db: lease.acquire(db, lease.TICK_LOCK, "h:2:b", later, config.lease))
    assert not store.call(lambda db: lease.renew(db, lease.TICK_LOCK, "h:1:a", later, config.lease))
    assert store.call(lambda db: lease.holder(db, lease.TICK_LOCK, later)) == "h:2:b"
