"""Where a signed webhook's latency goes: bench/webhook.py's server, timed per step.

The host of ``bench/webhook.py`` (offline model, SQLite, the collector as ``bothost run``
sets it) receives the same signed events from senders in a child process, with its own
steps timed on the shared monotonic clock (``time.perf_counter``, the same in both of its
threads): per request, from the handler's start to its submit into the event queue (the
front half: body, signature, JSON), the wait until the queue's writer takes its row into a
batch, the batch's store job (queued on the store thread, run there, and handed back to
the loop), and from the batch's outcome to the handler's answer; per batch, its rows and
the store thread's wall and CPU time.
The client's latency per request (from send to answer read) is printed beside the server's
own time, so what is left is spent outside the handler: aiohttp's parsing and writing, the
loop running other requests, and the client.

Run: .venv/bin/python bench/webhook_profile.py [--events N] [--concurrency C]
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/webhook.py beside this

from bothost.plugins.web import webhooks  # noqa: E402
from webhook import bench_host, blast_elsewhere  # noqa: E402

from bothost.events import queue  # noqa: E402
from bothost.host import heap  # noqa: E402

clock = time.perf_counter
CURRENT: contextvars.ContextVar[dict[str, float]] = contextvars.ContextVar("mark")


class Timings:
    """Timestamps of each request's and each batch's steps (seconds, shared clock)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, float]] = []
        self.batches: list[dict[str, float]] = []
        self.current: dict[int, dict[str, float]] = {}  # by id(waiter future)


def instrument(timings: Timings) -> Callable[[], None]:
    """Wrap the steps to time; the function that puts the originals back."""
    event, add, insert = (
        webhooks.WebhookRoutes.event,
        queue.EventQueue._add,
        queue.insert_batch,
    )

    async def timed_event(self: Any, request: Any) -> Any:
        mark = {"start": clock()}
        timings.requests.append(mark)
        CURRENT.set(mark)  # each request is its own task: its submit finds its own mark
        response = await event(self, request)
        mark["end"] = clock()
        return response

    def timed_add(self: Any, rows: Any, loop: Any) -> Any:
        mark = CURRENT.get({})
        mark["submit"] = clock()
        for row in rows:
            future = row.future()
            timings.current[id(future)] = mark
            future.add_done_callback(lambda f: mark.__setitem__("settled", clock()))
        return add(self, rows, loop)

    def timed_insert(db: Any, batch: list[Any], window: float) -> Any:
        stats: dict[str, float] = {"rows": len(batch)}
        marks = [timings.current.get(id(row.future()), {}) for row in batch]
        stats["thread_start"], cpu = clock(), time.thread_time()
        outcomes = insert(db, batch, window)
        stats["thread_end"], stats["cpu"] = clock(), time.thread_time() - cpu
        for mark in marks:
            mark["thread_start"], mark["thread_end"] = stats["thread_start"], stats["thread_end"]
        stats["marks"] = marks  # type: ignore[assignment]
        timings.batches.append(stats)
        return outcomes

    webhooks.WebhookRoutes.event = timed_event  # type: ignore[method-assign]
    queue.EventQueue._add = timed_add  # type: ignore[method-assign]
    queue.insert_batch = timed_insert

    def restore() -> None:
        webhooks.WebhookRoutes.event = event  # type: ignore[method-assign]
        queue.EventQueue._add = add  # type: ignore[method-assign]
        queue.insert_batch = insert

    return restore


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    if not ordered:
        return "-"
    p50, p99 = ordered[len(ordered) // 2], ordered[len(ordered) * 99 // 100]
    mean = sum(ordered) / len(ordered)
    return f"mean {mean * 1e3:6.2f}  p50 {p50 * 1e3:6.2f}  p99 {p99 * 1e3:6.2f} ms"


async def main(count: int, concurrency: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        host, secret = bench_host(tmp)
        timings = Timings()
        restore = instrument(timings)  # before the routes are added: they bind the handler
        try:
            await host.start(mcp=False, tick=False)
            heap.settle()
            url = f"http://127.0.0.1:{host.http.port}/webhook/events/bench"
            try:
                ids = [f"msg_{uuid.uuid4().hex}" for _ in range(count)]
                await blast_elsewhere(url, count, concurrency, secret, ids)  # warm up
                timings.requests.clear()
                timings.batches.clear()
                ids = [f"msg_{uuid.uuid4().hex}" for _ in range(count)]
                seconds, ok, thread, process, latencies = await blast_elsewhere(
                    url, count, concurrency, secret, ids
                )
            finally:
                await host.stop()
        finally:
            restore()
    report(timings, count, concurrency, seconds, ok, thread, process, latencies)


def report(
    timings: Timings,
    count: int,
    concurrency: int,
    seconds: float,
    ok: int,
    thread: float,
    process: float,
    latencies: list[float],
) -> None:
    requests = [r for r in timings.requests if "end" in r and "thread_end" in r]
    batches = [b for b in timings.batches if b["marks"] and "settled" in b["marks"][0]]
    print(
        f"{count} signed events from {concurrency} senders in another process: "
        f"{count / seconds:.0f} events/s, {ok} 2xx (switch interval "
        f"{sys.getswitchinterval() * 1e3:g} ms, load {os.getloadavg()[0]:.1f})"
    )
    print(
        f"  CPU per request: loop thread {thread / count * 1e6:.0f} µs, "
        f"whole process {process / count * 1e6:.0f} µs"
    )
    steps = [
        ("client: send to answer read", latencies),
        ("handler: start to answer", [r["end"] - r["start"] for r in requests]),
        ("  front half: start to submit", [r["submit"] - r["start"] for r in requests]),
        ("  submit to its batch's start", [r["thread_start"] - r["submit"] for r in requests]),
        (
            "  its batch on the store thread",
            [r["thread_end"] - r["thread_start"] for r in requests],
        ),
        ("  batch written to row settled", [r["settled"] - r["thread_end"] for r in requests]),
        ("  settled to answer", [r["end"] - r["settled"] for r in requests]),
    ]
    print("per request (the client's latency, then the server's steps):")
    for name, values in steps:
        print(f"  {name:34s}{percentiles(values)}")
    print(f"per batch ({len(batches)}, {count / max(len(batches), 1):.1f} rows on average):")
    walls = [b["thread_end"] - b["thread_start"] for b in batches]
    print(f"  {'store thread, wall':34s}{percentiles(walls)}")
    print(f"  {'store thread, CPU':34s}{percentiles([b['cpu'] for b in batches])}")
    backs = [b["marks"][0]["settled"] - b["thread_end"] for b in batches]
    print(f"  {'written to settled on the loop':34s}{percentiles(backs)}")
    gaps = [b["thread_start"] - a["thread_end"] for a, b in zip(batches, batches[1:], strict=False)]
    print(f"  {'one batch written to next started':34s}{percentiles(gaps)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument(
        "--switch-interval", type=float, help="sys.setswitchinterval for the server, seconds"
    )
    args = parser.parse_args()
    if args.switch_interval is not None:
        sys.setswitchinterval(args.switch_interval)
    asyncio.run(main(args.events, args.concurrency))
