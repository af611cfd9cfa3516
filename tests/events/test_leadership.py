"""Leadership among processes sharing a store: one leader on PostgreSQL, always on SQLite."""

from __future__ import annotations

import asyncio

import pytest

from bothost.crosshost.leadership import LEADER_LOCK, Leadership
from bothost.store import Store, core_migrations
from tests.conftest import both_backends

pytestmark = both_backends


@pytest.fixture
def stores(store_target):
    """Two processes' stores (two connections) on one database."""
    made = [Store(store_target, core_migrations()) for _ in range(2)]
    yield made
    for store in made:
        store.close()


async def test_one_leader_and_a_successor_when_it_resigns(stores, backend):
    seen: list[bool] = []
    a, b = (Leadership(s, ttl=60) for s in stores)
    b.listen(lambda leading: _append(seen, leading))
    assert await a.check()
    if backend == "sqlite":  # one host per file: whoever runs leads
        assert await b.check()
        return
    assert not await b.check()
    assert await a.holder() == a.owner
    assert await a.check()  # renewing
    await a.resign()
    assert not a.leading
    assert await b.check()
    assert seen == [True]
    assert await b.holder() == b.owner


async def test_a_dead_leader_is_replaced_at_the_next_try(stores, backend):
    if backend == "sqlite":
        pytest.skip("one host per SQLite file")
    a, b = (Leadership(s, ttl=600) for s in stores)
    assert await a.check()
    assert not await b.check()
    stores[0].close()  # the process died: its connection, and so its advisory lock, is gone
    # the server drops the lock once it has seen the connection go: at the next try or so,
    # not after the 10 minute lease
    async with asyncio.timeout(10):
        while not await b.check():
            await asyncio.sleep(0.05)
    owner = stores[1].call(
        lambda db: db.value("SELECT owner FROM locks WHERE name = ?", (LEADER_LOCK,))
    )
    assert owner == b.owner


async def test_a_leader_that_cannot_reach_the_store_gives_up_before_its_lease_ends(stores):
    now = [1000.0]
    a = Leadership(stores[0], ttl=30, clock=lambda: now[0])
    assert await a.check()

    async def broken(fn):
        raise OSError("network down")

    stores[0].run = broken  # type: ignore[method-assign]
    now[0] += a.period
    assert await a.check()  # one failed renewal: the row still stands for a while
    now[0] += a.ttl - a.period
    assert not await a.check()  # by now another host may take over: stop leading first


async def test_a_leader_whose_store_hangs_gives_up_before_its_lease_ends(stores):
    a = Leadership(stores[0], ttl=0.6)  # renewed every 0.2 s
    assert await a.check()

    async def hung(fn):
        await asyncio.Event().wait()  # a stalled connection: no answer, no error

    stores[0].run = hung  # type: ignore[method-assign]
    async with asyncio.timeout(10):  # each check is bounded; the row's end is 0.6 s away
        while await a.check():
            pass
    assert not a.leading


async def _append(seen: list[bool], leading: bool) -> None:
    seen.append(leading)


async def test_a_follower_ticks_only_for_urgent_events_and_the_leader_on_its_timetable(
    store_target,
):
    from bothost.config import TickConfig
    from bothost.events import events_migrations
    from bothost.events.tick import MAX_WAIT, Ticker
    from tests.helpers import until

    store = Store(store_target, [*core_migrations(), *events_migrations()])
    leading = [False]
    config = TickConfig(interval=0.01, deliver_to=["console:"], timezone="UTC")

    async def deliver(target, briefing):
        return "ok"

    ticker = Ticker(store, config, deliver, poke_delay=0, leading=lambda: leading[0])
    waits: list[float] = []  # how long the loop meant to wait each time, in order
    real_wait = ticker._wait

    async def wait(seconds: float) -> bool:
        waits.append(seconds)
        return await real_wait(seconds)

    ticker._wait = wait  # type: ignore[method-assign]
    task = asyncio.create_task(ticker.run_forever())
    try:
        ticker.poke()  # an urgent event arrived at this host: it ticks, leader or not
        await until(lambda: len(ticker.results) >= 1 and len(waits) >= 2)
        # then it waits for the next poke or for leadership, not for the 10 ms timetable
        assert waits[1] == MAX_WAIT and len(ticker.results) == 1
        leading[0] = True
        ticker.wake()
        await until(lambda: len(ticker.results) >= 3)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    triggers = store.call(
        lambda db: [r[0] for r in db.execute("SELECT trigger, owner FROM ticks ORDER BY id")]
    )
    owners = store.call(lambda db: [r[0] for r in db.execute("SELECT owner FROM ticks")])
    store.close()
    assert triggers[0] == "urgent" and set(triggers[1:]) == {"interval"}, triggers
    assert all(owners)  # each tick names the process that ran it


async def test_a_host_takes_leadership_only_once_it_has_started(home, store_target, backend):
    """Start-up (hooks, platforms, the listener) can hold the event loop for longer than a
    lease on a loaded machine, when no renewal runs: a host that had taken the lease before
    it came back to renew found another host leading, both running the singleton servers
    (the three-host test's counter on two hosts). So the lease is taken last."""
    from bothost.hookspecs import hookimpl
    from tests.helpers import free_port, make_host

    data: dict = {"platforms": {"web": {"port": free_port()}}}
    if backend == "postgresql":
        data["store"] = {"url": store_target}
    host = make_host(home, data)
    during: list[tuple[bool, object]] = []

    def look() -> None:
        row = host.store.call(
            lambda db: db.value("SELECT owner FROM locks WHERE name = ?", (LEADER_LOCK,))
        )
        during.append((host.leadership.leading, row))

    class Watcher:
        @hookimpl
        def startup(self, host):
            look()

    host.pm.register(Watcher(), name="watcher")
    await host.start(mcp=False, tick=False)
    try:
        assert during == [(False, None)]  # neither leading nor holding the row yet
        assert host.leadership.leading
    finally:
        await host.stop()


async def test_a_try_that_starts_late_still_tries(stores, backend):
    # under heavy load the store thread starts the job long after the check asked for it:
    # a job starting more than one period late was counted as a failed check without
    # trying, so on a loaded store no host might ever lead. It tries, from when it starts.
    now = [1000.0]
    a = Leadership(stores[0], ttl=30, clock=lambda: now[0])
    real_run = stores[0].run

    async def late(fn, *args, **kwargs):
        now[0] += 3 * a.period  # the jobs before it took this long (injected clock)
        return await real_run(fn, *args, **kwargs)

    stores[0].run = late  # type: ignore[method-assign]
    assert await a.check()
    assert a.leading
    if backend == "sqlite":  # the row runs from when the job ran, not from when it was asked
        expires = stores[0].call(
            lambda db: db.value("SELECT expires_at FROM locks WHERE name = ?", (LEADER_LOCK,))
        )
        assert expires == now[0] + a.ttl


async def test_a_try_the_check_stopped_waiting_for_counts_at_the_next_check(stores):
    # the check waits one period for the store; a job still queued then is not queued again
    # at every later check (piling up on the loaded store), and its outcome is not lost
    import threading

    a = Leadership(stores[0], ttl=0.6)  # the check waits 0.2 s for the store
    submitted = []
    real_submit = stores[0].submit

    def counting(fn):
        submitted.append(fn)
        return real_submit(fn)

    stores[0].submit = counting  # type: ignore[method-assign]
    gate, holding = threading.Event(), threading.Event()

    def hold(db):
        holding.set()
        gate.wait(10)

    stores[0].submit(hold)  # the store thread is busy with the jobs before ours
    assert holding.wait(5)
    assert not await a.check()  # waited a period: the try is queued, nothing is known yet
    assert not await a.check()
    assert len(submitted) == 2  # the gate and one try
    gate.set()
    async with asyncio.timeout(5):
        while not await a.check():
            pass
    assert a.leading and len(submitted) == 2
    await a.resign()
