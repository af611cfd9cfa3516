"""One source cannot fill the disk: at ``tick.max_pending_per_source`` it is held.

Found: an MCP server pushing unique ``event/*`` at full rate wrote 1,974,000 pending rows
and 366 MB of database in 30 s. Now a flooding server (``flood_server.py``: numbered
events, thousands per read, its position moving only past what the host read) stops at the
bound — the host reads it no more, so its events wait in its pipe, as when the store fails —
``/healthz`` and ``/metrics`` name the held source, and each tick that settles its events
lets the next ones in: every number arrives, none twice, none lost. A webhook source at the
bound gets 429 with ``Retry-After``, and its id is not recorded, so the sender's retry after
a tick is queued.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import aiohttp
from bothost.plugins.web.signing import new_secret

from bothost.host.wiring import tick_once
from tests.helpers import make_host, until
from tests.web.conftest import signed

FLOOD = Path(__file__).with_name("flood_server.py")
BOUND = 200
TOTAL = 3 * BOUND  # three fills: each tick lets one more in
WAIT = 60.0  # seconds for each condition; a few on an idle machine


def stored(host, source: str) -> list[int]:
    return host.store.call(
        lambda db: [
            int(r[0])
            for r in db.execute(
                "SELECT json_extract(payload, '$.n') FROM events WHERE source = ? ORDER BY 1",
                (source,),
            ).fetchall()
        ]
    )


def pending(host, source: str) -> int:
    return host.store.call(
        lambda db: db.execute(
            "SELECT count(*) FROM events WHERE source = ? AND status = 'pending'", (source,)
        ).fetchone()[0]
    )


async def scrape(http: aiohttp.ClientSession, host) -> tuple[dict, str]:
    base = f"http://127.0.0.1:{host.http.port}"
    async with http.get(base + "/healthz") as response:
        assert response.status == 200  # a held source is no outage of the host
        health = await response.json()
    async with http.get(base + "/metrics") as response:
        metrics = await response.text()
    return health, metrics


async def test_a_flooding_server_stops_at_its_bound_and_loses_nothing(home):
    host = make_host(
        home,
        {
            "tick": {"max_pending_per_source": BOUND, "deliver_to": []},
            "mcp": {
                "servers": {
                    "weather": {"enabled": False},
                    "flood": {
                        "command": sys.executable,
                        "args": [str(FLOOD)],
                        "env": {"FLOOD_TOTAL": str(TOTAL), "FLOOD_BURST": str(TOTAL)},
                    },
                }
            },
        },
    )
    await host.start(platforms=False, tick=False)
    try:
        async with aiohttp.ClientSession() as http:
            await until(lambda: pending(host, "flood") >= BOUND, timeout=WAIT)
            health, metrics = await scrape(http, host)
            assert pending(host, "flood") == BOUND, "the bound did not stop the flood"
            assert health["events"]["held"] == {"flood": BOUND}
            assert 'bothost_events_held{source="flood"} 1' in metrics.splitlines()
            ticks = 0
            while len(stored(host, "flood")) < TOTAL:
                assert ticks < TOTAL // BOUND, "a tick let nothing more in"
                await tick_once(host, "test")  # settles what is pending: room again
                ticks += 1
                await until(lambda: pending(host, "flood") == BOUND, timeout=WAIT)
            numbers = stored(host, "flood")
    finally:
        await host.stop()
    assert numbers == list(range(1, TOTAL + 1)), "events were lost or doubled"


async def test_a_webhook_source_at_its_bound_gets_429_and_its_retry_is_queued_later(home):
    secret = new_secret()
    host = make_host(
        home,
        {
            "tick": {"max_pending_per_source": 2, "deliver_to": []},
            "platforms": {"webhook": {"secret": secret}},
        },
    )
    await host.start(mcp=False, tick=False)
    url = f"http://127.0.0.1:{host.http.port}/webhook/events/hooks"
    try:
        async with aiohttp.ClientSession() as http:

            async def send(n: int) -> aiohttp.ClientResponse:
                body, headers = signed(secret, {"type": "alert", "payload": {"n": n}}, f"msg_{n}")
                async with http.post(url, data=body, headers=headers) as response:
                    await response.read()
                    return response

            assert [(await send(n)).status for n in (1, 2)] == [200, 200]
            held = await send(3)
            assert held.status == 429
            assert int(held.headers["Retry-After"]) > 0
            _, metrics = await scrape(http, host)
            assert 'bothost_events_held{source="hooks"} 1' in metrics.splitlines()
            assert (
                'bothost_webhook_requests_total{outcome="held",route="events"} 1'
                in metrics.splitlines()
            )
            await tick_once(host, "test")
            async with asyncio.timeout(WAIT):  # the sender's retries, until the host looks again
                while (retried := await send(3)).status == 429:
                    await asyncio.sleep(0.1)
            assert retried.status == 200
            health, metrics = await scrape(http, host)
            assert health["events"]["held"] == {}
            assert 'bothost_events_held{source="hooks"}' not in metrics
            assert stored(host, "hooks") == [1, 2, 3]
    finally:
        await host.stop()
