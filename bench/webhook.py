"""Webhook intake figures: signed events accepted per second on loopback.

A host (offline model, no MCP servers, no tick) listens on 127.0.0.1 with a webhook
secret; many concurrent senders POST signed ``/webhook/events/{source}`` requests, each
with a fresh ``webhook-id``, and every 2xx means the event was durably queued. The peer
for the ratio is a bare aiohttp handler on the same machine and loop that reads the body
and answers ``{}`` — the HTTP stack alone, no signature, no dedupe, no SQLite — so the
ratio says what verification, dedupe and durable queueing cost on top of serving HTTP.
The senders' requests, signature headers included, are built before the clock starts, so
the senders do the same work for both (the signing is the sender's cost, not the host's).
The two are measured in alternating rounds and each side's best round is compared, since
a shared machine's load changes within seconds. Then the same senders replay ids already
seen (the duplicate path), for reference. At the end the bench counts what the store
holds: one event row and one recorded id per 2xx, or it fails.

Senders on the server's own loop flatter the ratio: the client's work per request (about
as much as the bare handler's) is added to both sides, so our extra cost per request is
divided by a larger total. So the same rounds are run again with the senders in a child
process, and both are printed: there the loop serves only, and the server's CPU time per
request (its loop thread, and the whole process with the store thread) is printed beside
the rate, which on a shared machine swings less than a rate does.

Run: .venv/bin/python bench/webhook.py [--events N] [--concurrency C] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import yaml
from aiohttp import web
from bothost.plugins.web.signing import new_secret, sign_headers

from bothost.config import load
from bothost.hooks.discovery import load_plugins, new_plugin_manager
from bothost.host import heap
from bothost.host.host import Host

CONFIG = {
    "platforms": {"web": {"port": 0}, "console": {"enabled": False}},
    "mcp": {"servers": {"weather": {"enabled": False}}},
}


def payload(n: int) -> dict:
    return {
        "type": "alert",
        "payload": {
            "id": f"a{n}",
            "summary": f"disk alert {n}",
            "severity": "warning",
            "host": f"db-{n % 9}",
        },
    }


async def blast(
    url: str, count: int, concurrency: int, secret: str | None, ids: list[str]
) -> tuple[float, int, list[float]]:
    """POST ``count`` requests from ``concurrency`` senders; (seconds, 2xx answers, each
    request's latency in seconds: from sending it to its answer read)."""
    bodies = [json.dumps(payload(n)).encode() for n in range(count)]
    headers = [{"Content-Type": "application/json"} for _ in range(count)]
    if secret:  # signed now, outside the timing: the peer's senders sign nothing
        for n in range(count):
            headers[n].update(sign_headers(secret, ids[n], bodies[n]))
    next_index = iter(range(count))
    ok = 0
    latencies: list[float] = []
    clock = time.perf_counter

    async def sender(client: aiohttp.ClientSession) -> None:
        nonlocal ok
        for n in next_index:
            sent = clock()
            async with client.post(url, data=bodies[n], headers=headers[n]) as response:
                await response.read()
                ok += 200 <= response.status < 300
            latencies.append(clock() - sent)

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as client:
        started = time.perf_counter()
        await asyncio.gather(*(sender(client) for _ in range(concurrency)))
        return time.perf_counter() - started, ok, latencies


async def blast_elsewhere(
    url: str, count: int, concurrency: int, secret: str | None, ids: list[str]
) -> tuple[float, int, float, float, list[float]]:
    """:func:`blast` from a child process; (seconds, 2xx answers, CPU seconds of this
    thread and of this whole process while it ran, latencies). The child's start-up and
    signing happen while this process is idle, so they cost it no CPU."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--send",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    job = {"url": url, "count": count, "concurrency": concurrency, "secret": secret, "ids": ids}
    thread, process = time.thread_time(), time.process_time()
    out, _ = await child.communicate(json.dumps(job).encode())
    thread, process = time.thread_time() - thread, time.process_time() - process
    if child.returncode:
        raise SystemExit(f"the sending process failed ({child.returncode})")
    seconds, ok, latencies = json.loads(out)
    return seconds, ok, thread, process, latencies


def send_from_stdin() -> None:
    """The child of :func:`blast_elsewhere`: one job read from stdin, its result printed."""
    job = json.loads(sys.stdin.read())
    result = asyncio.run(
        blast(job["url"], job["count"], job["concurrency"], job["secret"], job["ids"])
    )
    print(json.dumps(result))


@contextlib.asynccontextmanager
async def bare_peer() -> AsyncIterator[str]:
    """The peer: a bare aiohttp handler that reads the body and answers ``{}``; its URL."""

    async def handle(request: web.Request) -> web.Response:
        await request.read()
        return web.json_response({})

    app = web.Application()
    app.router.add_post("/hook", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # noqa: SLF001
    try:
        yield f"http://127.0.0.1:{port}/hook"
    finally:
        await runner.cleanup()


@contextlib.asynccontextmanager
async def bare_server() -> AsyncIterator[str]:
    """The bare handler on aiohttp's low-level server (``web.Server``): no Application, so
    no router, middleware chain or signals; what the HTTP parser and transport cost alone."""

    async def handle(request: web.BaseRequest) -> web.Response:
        await request.read()
        return web.json_response({})

    server = web.Server(handle, access_log=None)
    listener = await asyncio.get_running_loop().create_server(server, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/hook"
    finally:
        listener.close()
        await server.shutdown()


def bench_host(tmp: str) -> tuple[Host, str]:
    """A host (not started) with the webhook routes on, in ``tmp``; and its webhook secret."""
    home = Path(tmp) / "home"
    home.mkdir(mode=0o700)
    secret = new_secret()
    config_file = Path(tmp) / "bench.yaml"
    config_file.write_text(
        yaml.safe_dump(
            {**CONFIG, "platforms": {**CONFIG["platforms"], "webhook": {"secret": secret}}}
        )
    )
    pm = new_plugin_manager()
    config = load(config_file, home)
    load_plugins(pm, [], [])
    return Host(config, home, pm), secret


async def main(count: int, concurrency: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        host, secret = bench_host(tmp)
        await host.start(mcp=False, tick=False)
        heap.settle()  # the collector as `bothost run` sets it (the peer shares the process)
        try:
            url = f"http://127.0.0.1:{host.http.port}/webhook/events/bench"
            rates, peer_rates, ok = [], [], 0
            waits: list[list[float]] = []  # each round's latencies, ours
            peer_waits: list[list[float]] = []
            async with bare_peer() as peer_url:
                # alternating rounds, each side's best: a shared machine's load changes
                # within seconds, and one round each compared whatever load each met
                for _ in range(rounds):
                    ids = [f"msg_{uuid.uuid4().hex}" for _ in range(count)]
                    seconds, answered, latencies = await blast(url, count, concurrency, secret, ids)
                    rates.append(count / seconds)
                    waits.append(latencies)
                    ok += answered
                    seconds, _, latencies = await blast(
                        peer_url, count, concurrency, None, [""] * count
                    )
                    peer_rates.append(count / seconds)
                    peer_waits.append(latencies)
                # the same with the senders in another process: (rate, loop CPU, process CPU)
                apart: list[tuple[float, float, float]] = []
                peer_apart: list[tuple[float, float, float]] = []
                apart_waits: list[list[float]] = []
                peer_apart_waits: list[list[float]] = []
                for _ in range(rounds):
                    ids = [f"msg_{uuid.uuid4().hex}" for _ in range(count)]
                    seconds, answered, thread, process, latencies = await blast_elsewhere(
                        url, count, concurrency, secret, ids
                    )
                    apart.append((count / seconds, thread / count, process / count))
                    apart_waits.append(latencies)
                    ok += answered
                    seconds, _, thread, process, latencies = await blast_elsewhere(
                        peer_url, count, concurrency, None, [""] * count
                    )
                    peer_apart.append((count / seconds, thread / count, process / count))
                    peer_apart_waits.append(latencies)
            dup_seconds, dup_ok, _ = await blast(url, count, concurrency, secret, ids)
            queued, recorded = await host.store.run(
                lambda db: (
                    db.value("SELECT COUNT(*) FROM events"),
                    db.value("SELECT COUNT(*) FROM webhook_ids"),
                )
            )
        finally:
            await host.stop()
    sent = 2 * count * rounds
    rate, peer = max(rates), max(peer_rates)
    print(
        f"signed webhook events: {count} from {concurrency} concurrent senders on loopback,"
        f" best of {rounds} rounds alternating with the peer"
    )
    print(
        f"  accepted and queued:  {rate:9.0f} events/s  ({ok} of {sent} answered 2xx, "
        f"{queued} rows in events, {recorded} ids recorded)"
    )
    if ok != sent or queued != sent or recorded != sent:
        raise SystemExit(f"lost or doubled: {sent} sent, {ok} 2xx, {queued} rows, {recorded} ids")
    print(f"  duplicates answered:  {count / dup_seconds:9.0f} requests/s  ({dup_ok} 2xx)")
    print(f"  peer, bare aiohttp:   {peer:9.0f} requests/s  (read body, answer {{}})")
    print(f"  ratio accepted/peer:  {rate / peer:9.2f}")
    print(
        "  rounds (ours / peer): "
        + ", ".join(f"{a:.0f}/{b:.0f}" for a, b in zip(rates, peer_rates, strict=True))
    )
    print_latency(waits[rates.index(rate)], peer_waits[peer_rates.index(peer)])
    best, peer_best = max(apart), max(peer_apart)
    best_waits = apart_waits[apart.index(best)]
    peer_best_waits = peer_apart_waits[peer_apart.index(peer_best)]
    print("senders in another process (the server's loop serves only), best of each:")
    print(f"  accepted and queued:  {best[0]:9.0f} events/s")
    print(f"  peer, bare aiohttp:   {peer_best[0]:9.0f} requests/s")
    print(f"  ratio accepted/peer:  {best[0] / peer_best[0]:9.2f}")
    # CPU per request, least of the rounds: what serving one costs when nothing else runs
    ours_cpu = min(a[1] for a in apart), min(a[2] for a in apart)
    peer_cpu = min(a[1] for a in peer_apart), min(a[2] for a in peer_apart)
    print(
        f"  CPU per request, loop thread:   ours {ours_cpu[0] * 1e6:5.0f} µs, "
        f"peer {peer_cpu[0] * 1e6:5.0f} µs  ({peer_cpu[0] / ours_cpu[0]:.2f}×)"
    )
    print(
        f"  CPU per request, whole process: ours {ours_cpu[1] * 1e6:5.0f} µs, "
        f"peer {peer_cpu[1] * 1e6:5.0f} µs  ({peer_cpu[1] / ours_cpu[1]:.2f}×)"
    )
    print(
        "  rounds (ours / peer): "
        + ", ".join(f"{a[0]:.0f}/{b[0]:.0f}" for a, b in zip(apart, peer_apart, strict=True))
    )
    print_latency(best_waits, peer_best_waits)


def print_latency(ours: list[float], peer: list[float]) -> None:
    """One line per side: the best round's latency per request, p50 and p99, in ms (with
    every sender waiting for its answer before sending again, the rate is the senders
    divided by this latency, so a latency well above the CPU per request is waiting)."""
    for name, latencies in (("ours", ours), ("peer", peer)):
        ordered = sorted(latencies)
        p50, p99 = ordered[len(ordered) // 2], ordered[len(ordered) * 99 // 100]
        print(f"  latency per request, {name}:  p50 {p50 * 1e3:6.2f} ms, p99 {p99 * 1e3:6.2f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--send", action="store_true", help="(internal) be the sending child")
    args = parser.parse_args()
    if args.send:
        send_from_stdin()
    else:
        asyncio.run(main(args.events, args.concurrency, args.rounds))
