"""Where a concurrent burst's time goes: bench/events.py's burst, counted and profiled.

The same burst as ``bench/events.py`` (10,000 producer tasks, each awaiting its own event's
commit, every event checked in the store at the end), with the collector as ``bothost run``
sets it, run three ways: plain, for the rate and the process's CPU time per event; counted,
for what each event costs the event loop (tasks, futures, loop callbacks, loop iterations),
the store jobs (batches) and the collections by generation; and under cProfile (the event
loop's thread only: the store thread's own time is the "store" line of the counted run).
The burst's floor (``bench/events.py``: the same producer tasks and gather awaiting a queue
that does nothing) is run and counted the same way beside it, so the part of each event's
cost that the shape itself takes on this machine is printed next to ours.

With ``--count`` it prints instead what one event costs in CPU instructions, counted by
callgrind (deterministic where the shared machine's clock is not): a burst of N and one of
2N events, each in its own process under ``valgrind --tool=callgrind`` after a warm-up
burst, and the difference divided by N, per thread (the event loop's, the store's). Fixed
costs (start-up, the first statements prepared) fall out of the difference.

Run: .venv/bin/python bench/burst_profile.py [--events N] [--top N]
     .venv/bin/python bench/burst_profile.py --count [--events N]   (N: 2,000 by default)
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import pstats
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/events.py beside this

import callgrind  # noqa: E402
from events import FloorQueue, burst, floor, make_events, open_store, poke  # noqa: E402

from bothost.config import TickConfig  # noqa: E402
from bothost.events.queue import EventQueue  # noqa: E402
from bothost.host import heap  # noqa: E402

WARM_UP = 300  # events burst before counting: code, caches and the allocator warm
LOOP_METHODS = ("_run_once", "create_future", "create_task", "call_soon", "call_soon_threadsafe")


def count_loop(counts: Counter[str]) -> dict[str, object]:
    """Count calls of the event loop's methods that make a loop iteration, a future, a
    task or a callback (the pure-Python loop's own methods, wrapped until
    :func:`uncount_loop` puts back the originals it is given)."""
    loop_class = asyncio.base_events.BaseEventLoop
    originals = {name: getattr(loop_class, name) for name in LOOP_METHODS}
    for name, original in originals.items():

        def counted(self, *args, __name=name, __original=original, **kwargs):
            counts[__name] += 1
            return __original(self, *args, **kwargs)

        setattr(loop_class, name, counted)
    return originals


def uncount_loop(originals: dict[str, object]) -> None:
    for name, original in originals.items():
        setattr(asyncio.base_events.BaseEventLoop, name, original)


async def counted_burst(directory: Path, count: int) -> tuple[Counter[str], float]:
    counts: Counter[str] = Counter()
    store = open_store(directory, "counted.db")
    submit = store.submit

    def job(fn):
        counts["store jobs (batches)"] += 1
        return submit(fn)

    store.submit = job  # type: ignore[method-assign]
    queue = EventQueue(store, TickConfig(), on_urgent=poke)
    events = make_events(count, "c")

    def collected(phase: str, info: dict) -> None:
        if phase == "start":
            counts[f"collections, generation {info['generation']}"] += 1

    store_before = store.call(lambda db: time.thread_time())  # the store thread's CPU
    originals = count_loop(counts)
    gc.callbacks.append(collected)
    try:
        ids = await asyncio.gather(*(queue.ingest([e]) for e in events))
    finally:
        gc.callbacks.remove(collected)
        uncount_loop(originals)
    await queue.close()
    store_time = store.call(lambda db: time.thread_time()) - store_before
    store.close()
    assert [None] not in ids
    return counts, store_time


async def counted_floor(count: int) -> Counter[str]:
    counts: Counter[str] = Counter()
    queue = FloorQueue()
    events = make_events(count, "f")
    originals = count_loop(counts)
    try:
        ids = await asyncio.gather(*(queue.ingest([e]) for e in events))
    finally:
        uncount_loop(originals)
    queue.close()
    assert len(ids) == count
    return counts


async def profiled_burst(directory: Path, count: int, top: int) -> None:
    store = open_store(directory, "profiled.db")
    queue = EventQueue(store, TickConfig(), on_urgent=poke)
    events = make_events(count, "p")
    profile = cProfile.Profile()
    profile.enable()
    await asyncio.gather(*(queue.ingest([e]) for e in events))
    profile.disable()
    await queue.close()
    store.close()
    pstats.Stats(profile).sort_stats("tottime").print_stats(top)


async def counted_in_callgrind(count: int) -> None:
    """Inside callgrind: a warm-up burst, the counts zeroed, the burst, the counts dumped."""
    heap.settle()
    with tempfile.TemporaryDirectory() as tmp:
        _, store = await burst(Path(tmp), WARM_UP, "warm.db")
        store.close()
        callgrind.zero()
        _, store = await burst(Path(tmp), count, "counted.db")
        callgrind.dump()
        store.close()


def count_instructions(count: int) -> None:
    """Print the instructions per event: bursts of ``count`` and ``2 * count``, differenced."""
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as pool:
        small, large = pool.map(
            lambda n: callgrind.count(
                f"burst{n}", __file__, ["--in-callgrind", "--events", str(n)], Path(tmp)
            ),
            (count, 2 * count),
        )
    loop, store = ((b - a) / count for a, b in zip(small, large, strict=True))
    print(f"instructions per event (callgrind, {2 * count:,} minus {count:,} events):"
          f" {loop + store:,.0f}: event loop {loop:,.0f}, store thread {store:,.0f}")  # fmt: skip


async def main(count: int, top: int) -> None:
    heap.settle()  # as bothost run does once started
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        cpu = time.process_time()
        rate, store = await burst(directory, count)
        cpu = time.process_time() - cpu
        store.close()
        floor_cpu = time.process_time()
        floor_rate = await floor(count)
        floor_cpu = time.process_time() - floor_cpu
        print(f"burst: {rate:,.0f} events/s, process CPU {cpu / count * 1e6:.1f} µs per event")
        print(f"floor: {floor_rate:,.0f} events/s, process CPU {floor_cpu / count * 1e6:.1f} µs"
              f" per event (the same tasks and gather, a queue doing nothing)")  # fmt: skip
        floor_counts = await counted_floor(count)
        print("floor, per event: " + ", ".join(
            f"{name} {n / count:.4f}" for name, n in sorted(floor_counts.items())))  # fmt: skip
        counts, store_cpu = await counted_burst(directory, count)
        print(f"per event ({count:,} events; the store thread's CPU in all:"
              f" {store_cpu / count * 1e6:.1f} µs per event):")  # fmt: skip
        for name, n in sorted(counts.items()):
            print(f"  {name:32} {n / count:8.4f}  ({n:,} in the burst)")
        await profiled_burst(directory, count, top)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--count", action="store_true", help="instructions, with callgrind")
    parser.add_argument("--in-callgrind", action="store_true", help="(internal) one burst")
    args = parser.parse_args()
    if args.in_callgrind:
        asyncio.run(counted_in_callgrind(args.events))
    elif args.count:
        count_instructions(args.events if args.events != 10_000 else 2_000)
    else:
        asyncio.run(main(args.events, args.top))
