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

Run: .venv/bin/python bench/webhook.py [--events N] [--concurrency C] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
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
from bothost.discovery import load_plugins, new_plugin_manager
from bothost.host import Host

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
) -> tuple[float, int]:
    """POST ``count`` requests from ``concurrency`` senders; (seconds, 2xx answers)."""
    bodies = [json.dumps(payload(n)).encode() for n in range(count)]
    headers = [{"Content-Type": "application/json"} for _ in range(count)]
    if secret:  # signed now, outside the timing: the peer's senders sign nothing
        for n in range(count):
            headers[n].update(sign_headers(secret, ids[n], bodies[n]))
    next_index = iter(range(count))
    ok = 0

    async def sender(client: aiohttp.ClientSession) -> None:
        nonlocal ok
        for n in next_index:
            async with client.post(url, data=bodies[n], headers=headers[n]) as response:
                await response.read()
                ok += 200 <= response.status < 300

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as client:
        started = time.perf_counter()
        await asyncio.gather(*(sender(client) for _ in range(concurrency)))
        return time.perf_counter() - started, ok


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


async def main(count: int, concurrency: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
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
        host = Host(config, home, pm)
        await host.start(mcp=False, tick=False)
        try:
            url = f"http://127.0.0.1:{host.http.port}/webhook/events/bench"
            rates, peer_rates, ok = [], [], 0
            async with bare_peer() as peer_url:
                # alternating rounds, each side's best: a shared machine's load changes
                # within seconds, and one round each compared whatever load each met
                for _ in range(rounds):
                    ids = [f"msg_{uuid.uuid4().hex}" for _ in range(count)]
                    seconds, answered = await blast(url, count, concurrency, secret, ids)
                    rates.append(count / seconds)
                    ok += answered
                    seconds, _ = await blast(peer_url, count, concurrency, None, [""] * count)
                    peer_rates.append(count / seconds)
            dup_seconds, dup_ok = await blast(url, count, concurrency, secret, ids)
            queued, recorded = await host.store.run(
                lambda db: (
                    db.value("SELECT COUNT(*) FROM events"),
                    db.value("SELECT COUNT(*) FROM webhook_ids"),
                )
            )
        finally:
            await host.stop()
    sent = count * rounds
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


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.events, args.concurrency, args.rounds))
