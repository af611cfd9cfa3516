"""The tick lease when wall clocks disagree or jump: two tick runners on one store (two
hosts, or a host and ``bothost tick``), each with an injected clock.

On PostgreSQL the lease expires by the database server's clock, so hosts whose clocks differ
by more than ``tick.lease`` do not take a live lease from each other; on SQLite (one machine,
one clock) by the injected clock. Either way a holder may come back from a stall to find its
lease run out and taken over: it must not deliver anything more (its lease's owner is the
fencing token every step checks), so no target gets a briefing twice. A clock set back must
not hold a dead holder's lease for as long as the jump: at most one more lease.
"""

from __future__ import annotations

import asyncio

import pytest

from bothost.crosshost import lease
from bothost.crosshost.leadership import LEADER_LOCK, Leadership
from bothost.events.tick import run_tick
from bothost.models import Event
from bothost.store import Store, core_migrations
from tests.conftest import both_backends
from tests.helpers import age_lease, ingest_one

pytestmark = both_backends

T0 = 1_800_000_000.0
WAIT = 10.0  # seconds a test waits for the paused tick to reach its pause (a bound, not a sleep)


class Clock:
    """A wall clock the test sets and jumps."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def run_out(store: Store, name: str, clock: Clock, ttl: float) -> None:
    """Let the lease ``name`` run out while its holder stalls: the clock moves past it (on
    SQLite the one leases expire by; on PostgreSQL the row is aged as the server's would)."""
    clock.now += ttl + 1
    age_lease(store, name, ttl + 1)


def expires_in(store: Store, name: str) -> float:
    """Seconds until the lease ``name`` expires, by the clock leases are judged by (PG)."""
    return store.call(
        lambda db: (
            db.value("SELECT expires_at FROM locks WHERE name = ?", (name,))
            - lease.store_time(db, 0.0)
        )
    )


async def test_a_tick_whose_lease_ran_out_and_was_taken_over_delivers_nothing_more(
    store_target, store, queue, config, recorder
):
    from bothost.events import events_migrations

    clock = Clock(T0)
    other = Store(store_target, [*core_migrations(), *events_migrations()])  # a second host
    try:
        await ingest_one(queue, Event("gmail", "event/new_email", {"id": "m", "summary": "hi"}))
        paused, resume = asyncio.Event(), asyncio.Event()

        async def slow_first(target, briefing):  # the first runner's first send hangs a while
            if not paused.is_set():
                paused.set()
                await resume.wait()
            return await recorder(target, briefing)

        first = asyncio.create_task(run_tick(store, config, slow_first, clock=clock))
        async with asyncio.timeout(WAIT):
            await paused.wait()
        run_out(store, lease.TICK_LOCK, clock, config.lease)  # the first runner stalled
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
    if store.dialect == "sqlite":
        # a holder that died mid-tick (SIGKILL) left its row, written before the clock went
        # back an hour
        assert store.call(
            lambda db: lease.acquire(db, lease.TICK_LOCK, "h:1:dead", T0, config.lease)
        )
        clock.now = T0 - 3600
    else:  # the server's clock went back an hour after a holder wrote its row and died
        # (its advisory lock died with it, so the row is taken over at once)
        store.call(
            lambda db: db.execute(
                "INSERT INTO locks (name, owner, expires_at) VALUES (?, 'h:1:dead', ?)",
                (lease.TICK_LOCK, lease.store_time(db, 0.0) + 3600 + config.lease),
            )
        )
    await ingest_one(queue, Event("gmail", "event/new_email", {"id": "m", "summary": "hi"}))
    first = await run_tick(store, config, recorder, clock=clock)
    if first.status == "busy":  # SQLite: the row is the only authority; PostgreSQL took it
        run_out(store, lease.TICK_LOCK, clock, config.lease)  # one lease later, not an hour
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
    clock = Clock(T0)
    run_out(store, lease.TICK_LOCK, clock, config.lease)
    later = clock.now
    assert store.call(lambda db: lease.acquire(db, lease.TICK_LOCK, "h:2:b", later, config.lease))
    assert not store.call(lambda db: lease.renew(db, lease.TICK_LOCK, "h:1:a", later, config.lease))
    assert store.call(lambda db: lease.holder(db, lease.TICK_LOCK, later)) == "h:2:b"


async def test_hosts_whose_clocks_differ_by_more_than_a_lease_leave_a_live_tick_lease_alone(
    store_target, store, queue, config, recorder
):
    from bothost.events import events_migrations

    if store.dialect == "sqlite":
        pytest.skip("one SQLite file, one machine, one clock")
    ahead = Clock(T0 + config.lease + 60)  # the second host's clock runs a lease ahead
    other = Store(store_target, [*core_migrations(), *events_migrations()])
    try:
        await ingest_one(queue, Event("gmail", "event/new_email", {"id": "m", "summary": "hi"}))
        paused, resume = asyncio.Event(), asyncio.Event()

        async def slow(target, briefing):
            if not paused.is_set():
                paused.set()
                await resume.wait()
            return await recorder(target, briefing)

        first = asyncio.create_task(run_tick(store, config, slow, clock=Clock(T0)))
        async with asyncio.timeout(WAIT):
            await paused.wait()
        assert (await run_tick(other, config, recorder, clock=ahead)).status == "busy"
        resume.set()
        async with asyncio.timeout(WAIT):
            assert (await first).status == "ok"
        assert sorted(target for target, _ in recorder.sent) == sorted(config.deliver_to)
    finally:
        other.close()


async def test_hosts_whose_clocks_differ_by_more_than_a_lease_keep_one_leader(store_target, store):
    if store.dialect == "sqlite":
        pytest.skip("one SQLite file, one machine, one clock")
    other = Store(store_target, core_migrations())
    try:
        ttl = 60.0
        behind = Leadership(store, ttl, clock=Clock(T0))
        ahead = Leadership(other, ttl, clock=Clock(T0 + ttl + 60))
        for _ in range(3):  # each tries as it would every period: no churn either way
            assert await behind.check()
            assert not await ahead.check()
        owner = store.call(
            lambda db: db.value("SELECT owner FROM locks WHERE name = ?", (LEADER_LOCK,))
        )
        assert owner == behind.owner
        assert 0 < expires_in(store, LEADER_LOCK) <= ttl
    finally:
        other.close()


async def test_a_row_far_ahead_of_the_servers_clock_is_cut_to_one_lease(
    store_target, store, config
):
    if store.dialect == "sqlite":
        pytest.skip("SQLite: the backward jump above")
    hung = Store(store_target, core_migrations())  # a live holder, so its lock stands
    try:
        # written by an older bothost on a host whose clock ran an hour ahead
        assert hung.call(lambda db: db.try_lock(lease.TICK_LOCK))
        hung.call(
            lambda db: db.execute(
                "INSERT INTO locks (name, owner, expires_at) VALUES (?, 'h:1:hung', ?)",
                (lease.TICK_LOCK, lease.store_time(db, 0.0) + 3600 + config.lease),
            )
        )
        assert not store.call(lambda db: lease.acquire(db, lease.TICK_LOCK, "h:2:b", T0, 300))
        assert expires_in(store, lease.TICK_LOCK) <= config.lease
    finally:
        hung.close()
