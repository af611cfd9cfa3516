"""Event queue figures: ingestion rate into SQLite and tick time at 10,000 events.

Ingestion is measured on fresh databases: an MCP server (on our kit) pushing a burst of
``event/*`` notifications through a real host into SQLite (with the CPU per event of the
host and of the server's process over the same span); a burst of concurrent producers
(``EventQueue.ingest`` of one event from many tasks, as MCP servers and webhooks push),
one producer awaiting each event in turn, and two peers — the same store with one transaction per
event (what a queue without batching costs), and bare sqlite-utils in a tight loop with
one transaction per row (no event loop, no dedupe: a ceiling for reference). Then one
offline tick triages and renders all 10,000 into a briefing for a target that discards it.

Beside the burst, in alternating rounds, its floor: the same producer tasks and gather
awaiting a stand-in for the queue that does nothing (a future per event, resolved in
batches from another thread with one loop wake-up per batch: no store, no JSON, no
dedupe). No host can take this shape's events faster on this machine, so the burst is
also printed as a fraction of it; the floor's own rate is what the event loop's tasks,
futures and callbacks allow.

The collector is set as ``bothost run`` sets it once started (:mod:`bothost.host.heap`: start-up's
objects frozen, a larger young generation); the burst is run a second time with Python's
default collector, and the full collections that fell inside each are printed: how many
fall inside the burst is what made the default figure swing from run to run.

With ``--store postgresql://…`` (an empty database bothost may write; its events, ticks
and briefings are emptied first) the burst, the one-producer run and the tick run on
PostgreSQL too, printed beside SQLite's with the server's durability settings. ``--store
auto-postgres`` starts a throwaway cluster for it (Debian's ``postgresql``, as the tests do:
tests/postgres.py) on a unix socket, with ``synchronous_commit=off`` and fsync on — commits
do not wait for the disk, as SQLite's ``synchronous=NORMAL`` in WAL, and a crash loses at
most the last moments, as there.

With uvloop installed (``pip install uvloop``; bothost does not use it) the burst with its
floor, the same-store peer and the MCP server's run are repeated on uvloop's event loop in
the same run and printed below the rest: a choice of loop moves the floor and every path
that runs on it, so both ways are shown side by side.

With ``--switch-interval MS`` the whole run sets Python's switch interval
(``sys.setswitchinterval``, 5 ms by default) first: how long a thread waiting for the GIL
waits before the running one is made to let it go. The burst's store thread waits so after
each statement while the event loop is busy taking the burst in (docs/events.md,
"Figures"); the interval is printed with the figures.

Run: .venv/bin/python bench/events.py [--events N] [--store postgresql://…|auto-postgres]
     [--switch-interval MS]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from queue import SimpleQueue

import sqlite_utils
import yaml

from bothost.config import TickConfig, TickRule, load
from bothost.events import events_migrations
from bothost.events.queue import EventQueue
from bothost.events.tick import run_tick
from bothost.hooks.discovery import load_plugins, new_plugin_manager
from bothost.host import heap
from bothost.models import Event
from bothost.store import Store, core_migrations

ROUNDS = 3  # the burst and its floor alternate, best of each: the machine is shared
SEQUENTIAL_SHARE = 10  # the one-at-a-time run uses a tenth of the events: it is slow
SERVER_DEADLINE = 120.0  # seconds for the MCP server's whole burst to land in SQLite
POLL = 0.005  # seconds between looks at the row count
PYTHON_COLLECTOR = gc.get_threshold()  # Python's own, before heap.settle changes it

# an MCP server on our kit whose watcher pushes BURST_COUNT events once, at start-up
BURST_SERVER = """
import os
from bothost.mcp_servers.kit import Server

server = Server("burst", version="1.0.0")


@server.watcher(interval_env="BURST_POLL_SECONDS", default_interval=3600)
async def burst(server):
    for n in range(int(os.environ["BURST_COUNT"])):
        await server.notify("event/bench", {"id": f"b{n}", "summary": f"event {n}",
                                            "host": f"h{n % 7}"})


server.run()
"""


def make_events(count: int, tag: str) -> list[Event]:
    kinds = [
        ("gmail", "event/new_email", "from", "ana@corp.com"),
        ("ssh", "event/ssh_alert", "host", "db-1"),
        ("weather", "event/weather_alert", "location", "Zurich"),
        ("news", "event/item", "feed", "hn"),
    ]
    out = []
    for n in range(count):
        source, type_, field, value = kinds[n % len(kinds)]
        out.append(
            Event(
                source,
                type_,
                {"id": f"{tag}{n}", field: f"{value}{n % 7}", "summary": f"{type_} number {n}"},
            )
        )
    return out


def poke() -> None:
    """The queue's ``on_urgent`` as the host sets it (the ticker's poke): a queue with one
    asks each stored event's priority."""


def open_store(directory: Path | str, name: str) -> Store:
    """A fresh SQLite file in ``directory``, or the PostgreSQL database ``directory`` names
    with the tables a run fills emptied."""
    if isinstance(directory, str):
        store = Store(directory, [*core_migrations(), *events_migrations()])
        store.call(lambda db: db.execute("TRUNCATE events, ticks, briefings, deliveries, locks"))
        return store
    return Store(directory / name, [*core_migrations(), *events_migrations()])


class FullCollections:
    """Counts the collector's full (oldest-generation) collections while it is installed."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2:
            self.count += 1

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


async def burst(
    directory: Path | str, count: int, name: str = "burst.db", full: FullCollections | None = None
) -> tuple[float, Store]:
    store = open_store(directory, name)
    queue = EventQueue(store, TickConfig(), on_urgent=poke)
    events = make_events(count, "b")
    with full or FullCollections():
        start = time.perf_counter()
        ids = await asyncio.gather(*(queue.ingest([e]) for e in events))
        elapsed = time.perf_counter() - start
    await queue.close()
    assert [None] not in ids
    stored = store.call(lambda db: db.value("SELECT count(*) FROM events"))
    assert stored == count, f"{stored} of {count} events in the store"  # nothing lost
    return count / elapsed, store


class FloorQueue:
    """The floor's stand-in for :class:`EventQueue`: a producer awaits a future of its own,
    and the futures gathered in one pass of the loop are resolved from another thread with
    one wake-up of the loop (as a batch written on the store thread is), doing nothing else."""

    def __init__(self) -> None:
        self._futures: list[asyncio.Future[int]] = []
        self._batches: SimpleQueue[tuple[asyncio.AbstractEventLoop, list] | None] = SimpleQueue()
        self._thread = threading.Thread(target=self._resolve, name="bench-floor", daemon=True)
        self._thread.start()

    async def ingest(self, events: list[Event]) -> list[int]:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        if not self._futures:  # the first of a pass: hand over what gathered, after it
            loop.call_soon(self._hand_over, loop)
        self._futures.append(future)
        return [await future]

    def _hand_over(self, loop: asyncio.AbstractEventLoop) -> None:
        batch, self._futures = self._futures, []
        self._batches.put((loop, batch))

    def _resolve(self) -> None:
        while (item := self._batches.get()) is not None:
            loop, batch = item
            loop.call_soon_threadsafe(settle_all, batch)

    def close(self) -> None:
        self._batches.put(None)
        self._thread.join()


def settle_all(batch: list[asyncio.Future[int]]) -> None:
    for number, future in enumerate(batch, 1):
        future.set_result(number)


async def floor(count: int) -> float:
    """The burst's shape awaiting :class:`FloorQueue`: events/s."""
    queue = FloorQueue()
    events = make_events(count, "f")
    start = time.perf_counter()
    ids = await asyncio.gather(*(queue.ingest([e]) for e in events))
    elapsed = time.perf_counter() - start
    queue.close()
    assert len(ids) == count and [None] not in ids  # every producer answered
    return count / elapsed


async def burst_and_floor(directory: Path, count: int) -> tuple[list[float], list[float], int]:
    """:data:`ROUNDS` rounds of the burst (each on a fresh database) and its floor, in turn;
    the rates of each, and the full collections that fell inside the bursts. The first
    round's database is left as ``burst.db`` for the tick."""
    ours, floors, full = [], [], FullCollections()
    for round_ in range(ROUNDS):
        rate, store = await burst(
            directory, count, "burst.db" if not round_ else f"burst{round_}.db", full
        )
        store.close()
        ours.append(rate)
        floors.append(await floor(count))
    return ours, floors, full.count


async def sequential(directory: Path | str, count: int) -> float:
    store = open_store(directory, "sequential.db")
    queue = EventQueue(store, TickConfig(), on_urgent=poke)
    events = make_events(count, "s")
    start = time.perf_counter()
    for event in events:
        await queue.ingest([event])
    elapsed = time.perf_counter() - start
    await queue.close()
    store.close()
    return count / elapsed


async def peer_naive_queue(directory: Path, count: int) -> float:
    """The same store, one ``store.run`` transaction per event (no batching)."""
    store = open_store(directory, "naive.db")
    events = make_events(count, "n")

    def insert(db, event: Event) -> None:
        with db.transaction():
            db.execute(
                "INSERT INTO events (source, type, payload, received_at, dedupe_key)"
                " VALUES (?, ?, ?, ?, ?)",
                (
                    event.source,
                    event.type,
                    json.dumps(event.payload),
                    time.time(),
                    f"{event.source}:{event.type}:{event.payload['id']}",
                ),
            )

    start = time.perf_counter()
    await asyncio.gather(*(store.run(lambda db, e=e: insert(db, e)) for e in events))
    elapsed = time.perf_counter() - start
    store.close()
    return count / elapsed


def peer_one_transaction_per_event(directory: Path, count: int) -> float:
    db = sqlite_utils.Database(directory / "peer.db")
    db.conn.execute("PRAGMA journal_mode = WAL")
    db.conn.execute("PRAGMA synchronous = NORMAL")
    table = db["events"]
    events = make_events(count, "p")
    start = time.perf_counter()
    for event in events:
        with db.conn:
            table.insert(
                {
                    "source": event.source,
                    "type": event.type,
                    "payload": json.dumps(event.payload),
                    "received_at": time.time(),
                }
            )
    elapsed = time.perf_counter() - start
    db.close()
    return count / elapsed


def process_cpu(pid: int) -> float:
    """Seconds of CPU (user + system) process ``pid`` has used, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu() -> float:
    """Seconds of CPU this process has used, every thread of it."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def server_to_sqlite(directory: Path, count: int) -> tuple[float, float, float]:
    """Events/s from an MCP server's notifications through the host into SQLite, and the
    CPU seconds per event of the host (all its threads) and of the server's process over
    the same span: on two cores the two processes share the machine, so either's CPU per
    event bounds the rate."""
    from bothost.host.host import Host

    script = directory / "burst_server.py"
    script.write_text(BURST_SERVER)
    home = directory / "home"
    home.mkdir(mode=0o700)
    config_file = directory / "bench.yaml"
    config_file.write_text(
        yaml.safe_dump(
            {
                "mcp": {
                    "servers": {
                        "weather": {"enabled": False},
                        "burst": {
                            "command": sys.executable,
                            "args": [str(script)],
                            "env": {"BURST_COUNT": str(count)},
                        },
                    }
                }
            }
        )
    )
    config = load(config_file, home)
    pm = new_plugin_manager()
    load_plugins(pm, [], [])
    host = Host(config, home, pm)
    counted = lambda db: db.execute("SELECT count(*) FROM events").fetchone()[0]  # noqa: E731
    await host.start(serve_http=False, platforms=False, tick=False)
    try:
        assert host.mcp is not None
        async with asyncio.timeout(SERVER_DEADLINE):
            while not await host.store.run(counted):
                await asyncio.sleep(POLL)
            first = time.perf_counter()
            (pid,) = [s.pid for s in host.mcp.status() if s.name == "burst"]
            assert pid is not None, "the burst server has no process"
            host_cpu, server_cpu = own_cpu(), process_cpu(pid)
            stored = await host.store.run(counted)
            while await host.store.run(counted) < count:
                await asyncio.sleep(POLL)
            elapsed = time.perf_counter() - first
            host_cpu, server_cpu = own_cpu() - host_cpu, process_cpu(pid) - server_cpu
    finally:
        await host.stop()
    measured = count - stored
    if measured <= 0:  # the CPU is taken from the first poll that sees a row to the last
        raise SystemExit(
            f"MCP line: all {count} events were stored before the first poll; "
            "give --events more (the default is 10,000)"
        )
    return count / elapsed, host_cpu / measured, server_cpu / measured


async def tick_time(store: Store) -> tuple[float, int]:
    config = TickConfig(
        deliver_to=["console:"],
        rules=[TickRule({"source": "gmail"}, "high"), TickRule({"source": "news"}, "low")],
    )
    sent: list[str] = []

    async def discard(target: str, briefing) -> str:
        sent.append(briefing.text)
        return "bench"

    start = time.perf_counter()
    result = await run_tick(store, config, discard)
    elapsed = time.perf_counter() - start
    assert result.events and sent
    return elapsed, result.events


AUTO_POSTGRES = "auto-postgres"
# the throwaway cluster's durability, comparable with SQLite's synchronous=NORMAL (see above)
AUTO_OPTIONS = "-c synchronous_commit=off"


async def postgres(url: str, count: int) -> tuple[float, float, float, str]:
    """The burst, one producer and the tick, on the PostgreSQL database at ``url``; and
    what the server is (version, durability), to print beside them."""
    one_by_one = await sequential(url, count // SEQUENTIAL_SHARE)
    rate, store = await burst(url, count)
    seconds, _ = await tick_time(store)
    names = ("server_version", "synchronous_commit", "fsync")
    settings = store.call(lambda db: [db.value(f"SHOW {name}") for name in names])
    store.close()
    server = "PostgreSQL {} (synchronous_commit={}, fsync={})".format(*settings)
    return rate, one_by_one, seconds, server


async def default_collector_burst(directory: Path, count: int) -> tuple[float, int]:
    """The burst with Python's default collector (nothing frozen); the collector is settled
    again afterwards, as the rest of the bench runs as the host does."""
    gc.unfreeze()
    gc.set_threshold(*PYTHON_COLLECTOR)
    try:
        full = FullCollections()
        rate, store = await burst(directory, count, "burst-default.db", full)
        store.close()
        return rate, full.count
    finally:
        heap.settle()


async def main(count: int, url: str | None = None) -> None:
    heap.settle()  # as bothost run does once started
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        rounds, floors, full_count = await burst_and_floor(directory, count)
        rate, floor_rate = max(rounds), max(floors)
        default_rate, default_full = await default_collector_burst(directory, count)
        store = open_store(directory, "burst.db")  # the tick below reads the burst's events
        one_by_one = await sequential(directory, count // SEQUENTIAL_SHARE)
        naive = await peer_naive_queue(directory, count)
        peer = peer_one_transaction_per_event(directory, count)
        seconds, events = await tick_time(store)
        store.close()
        from_server, host_cpu, server_cpu = await server_to_sqlite(directory, count)
    print(f"ingestion, concurrent burst:      {rate:10,.0f} events/s ({count:,} events, best of"
          f" {ROUNDS}; collector as bothost run sets it: {full_count} full collections in"
          f" them)")  # fmt: skip
    print(f"  floor, same tasks and gather, a queue doing nothing:{floor_rate:9,.0f} events/s"
          f" (best of {ROUNDS})")  # fmt: skip
    print(f"  burst / floor:                   {rate / floor_rate:9.2f}")
    print(
        "  rounds (burst / floor): "
        + ", ".join(f"{o:,.0f}/{f:,.0f}" for o, f in zip(rounds, floors, strict=True))
    )
    print(f"  switch interval:                 {sys.getswitchinterval() * 1000:9.3g} ms")
    print(f"  same, Python's default collector:{default_rate:9,.0f} events/s"
          f" ({default_full} full collections in it)")  # fmt: skip
    print(f"ingestion, one producer awaiting: {one_by_one:10,.0f} events/s")
    print(f"MCP server → host → SQLite:       {from_server:10,.0f} events/s (first row to last)")
    print(f"  CPU per event: host {host_cpu * 1e6:.1f} us (all threads), server"
          f" {server_cpu * 1e6:.1f} us")  # fmt: skip
    print(f"peer: same store, 1 tx/event:     {naive:10,.0f} events/s")
    print(f"peer: bare sqlite-utils, 1 tx/event (no asyncio, no dedupe): {peer:,.0f} events/s")
    print(f"burst vs same-store peer:         {rate / naive:10.1f}x")
    print(f"tick (offline triage + render + deliver) at {events:,} events: {seconds:.3f} s")
    if url:
        pg_rate, pg_one, pg_seconds, server = await postgres(url, count)
        print(f"{server}, same run:")
        print(f"PostgreSQL, concurrent burst:     {pg_rate:10,.0f} events/s (SQLite/PostgreSQL"
              f" {rate / pg_rate:.1f}x)")  # fmt: skip
        print(f"PostgreSQL, one producer awaiting:{pg_one:10,.0f} events/s (SQLite/PostgreSQL"
              f" {one_by_one / pg_one:.1f}x)")  # fmt: skip
        print(f"PostgreSQL tick at {events:,} events: {pg_seconds:.3f} s")


async def on_other_loop(count: int) -> tuple[list[float], list[float], float, float]:
    """The figures the event loop moves, again on whichever loop runs this: the burst and
    its floor in rounds, the same-store peer, the MCP server's burst."""
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        rounds, floors, _ = await burst_and_floor(directory, count)
        naive = await peer_naive_queue(directory, count)
        from_server, _, _ = await server_to_sqlite(directory, count)
    return rounds, floors, naive, from_server


def uvloop_figures(count: int) -> None:
    """:func:`on_other_loop` on uvloop, printed; one line saying so when it is not installed."""
    try:
        import uvloop
    except ImportError:
        print("(uvloop not installed: `pip install uvloop` to see these figures on its loop too)")
        return
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        rounds, floors, naive, from_server = runner.run(on_other_loop(count))
    rate, floor_rate = max(rounds), max(floors)
    print(f"on uvloop {uvloop.__version__}'s event loop, same run (bothost does not use it):")
    print(f"ingestion, concurrent burst:      {rate:10,.0f} events/s (best of {ROUNDS})")
    print(f"  floor, same tasks and gather, a queue doing nothing:{floor_rate:9,.0f} events/s")
    print(f"  burst / floor:                   {rate / floor_rate:9.2f}")
    print(
        "  rounds (burst / floor): "
        + ", ".join(f"{o:,.0f}/{f:,.0f}" for o, f in zip(rounds, floors, strict=True))
    )
    print(f"MCP server → host → SQLite:       {from_server:10,.0f} events/s (first row to last)")
    print(f"peer: same store, 1 tx/event:     {naive:10,.0f} events/s")
    print(f"burst vs same-store peer:         {rate / naive:10.1f}x")


def with_cluster(count: int) -> None:
    """The run with ``--store auto-postgres``: a throwaway cluster, removed afterwards."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ of this checkout
    from tests.postgres import Cluster

    cluster = Cluster(AUTO_OPTIONS).start()
    try:
        asyncio.run(main(count, cluster.database()))
    finally:
        cluster.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument(
        "--store",
        help=f"also run on this PostgreSQL database (postgresql://…), or {AUTO_POSTGRES} to"
        " start a throwaway cluster for it",
    )
    parser.add_argument(
        "--switch-interval",
        type=float,
        metavar="MS",
        help="Python's switch interval for the whole run, in ms (Python's default: 5)",
    )
    args = parser.parse_args()
    if args.switch_interval is not None:
        if not args.switch_interval > 0:
            parser.error("--switch-interval must be a positive number of milliseconds")
        sys.setswitchinterval(args.switch_interval / 1000)
    if args.store == AUTO_POSTGRES:
        with_cluster(args.events)
    else:
        asyncio.run(main(args.events, args.store))
    uvloop_figures(args.events)
