"""Where a signed webhook's cost goes, as instructions per request, layer by layer.

bench/webhook.py compares rates and CPU time, which a shared machine makes noisy; this
counts instructions with callgrind, which the load does not change. The server of
bench/webhook.py receives the same senders' requests (in a child process, not counted)
once per layer, each layer adding one part of the path on top of the one before:

* ``server``: the same bare handler on aiohttp's low-level server (``web.Server``), no
  Application: the HTTP parser, the transport and the Request and Response objects alone;
* ``peer``: the bare aiohttp handler of bench/webhook.py (read the body, answer ``{}``);
* ``routed``: the host's own app, the events route reading the body and answering at
  once, served through the Application (as before 2026-12-04): its router with every
  route of the host, its two middlewares (and aiohttp's own), the security headers'
  ``on_response_prepare`` signal;
* ``app``: the same, served directly by the listener (``bothost.http.direct``): what the
  listener's protections, done inline once, add to aiohttp;
* ``front``: and the signature check and the JSON decode (the handler's front half);
* ``checks``: the whole handler, with the queue answering at once (no store, no wait);
* ``full``: the real path, each event durably queued before its answer.

Per layer it prints the event loop's thread and the other threads (the store's) per
request, and what the layer added to the one before. Each layer runs as its own process
under ``valgrind --tool=callgrind`` (about 5 minutes each on a loaded 2-core machine; two
run at once); counting starts after a warm-up round (``callgrind_control -z``).

Run: .venv/bin/python bench/webhook_layers.py [--events N] [--layers peer,app,...]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/webhook.py beside this

import callgrind  # noqa: E402
from bothost.plugins.web import webhooks  # noqa: E402
from webhook import bare_peer, bare_server, bench_host, blast_elsewhere  # noqa: E402

from bothost.api import Receipt  # noqa: E402
from bothost.host import heap  # noqa: E402
from bothost.host.host import Host  # noqa: E402
from bothost.http import direct  # noqa: E402

LAYERS = ["server", "peer", "routed", "app", "front", "checks", "full"]
WARM_UP = 300  # requests before counting: connections open, caches and code warm
ANSWER = b'{"accepted": true, "event_id": 1}'


def stub(layer: str) -> None:
    """Cut the webhook path short after ``layer`` (before the host adds its routes)."""

    async def app(self: Any, request: Any, source: str) -> Any:
        await request.read()
        return webhooks.answer(ANSWER)

    async def front(self: Any, request: Any, source: str) -> Any:
        await self.signed_json(request, "events")
        return webhooks.answer(ANSWER)

    numbers = iter(range(1, 1 << 62))

    async def queued_at_once(self: Any, *args: Any) -> Receipt:
        return Receipt(event_id=next(numbers))

    if layer == "routed":  # the app's own route: the listener serves nothing directly
        webhooks.WebhookRoutes.event_at = app  # type: ignore[method-assign]
        direct.install = lambda *args: None  # type: ignore[assignment]
    elif layer == "app":
        webhooks.WebhookRoutes.event_at = app  # type: ignore[method-assign]
    elif layer == "front":
        webhooks.WebhookRoutes.event_at = front  # type: ignore[method-assign]
    elif layer == "checks":
        Host.ingest_webhook_event = queued_at_once  # type: ignore[method-assign]


async def serve(layer: str, count: int) -> None:
    """One layer's run, inside callgrind: warm up, zero the counts, send, dump them."""
    stub(layer)
    with tempfile.TemporaryDirectory() as tmp:
        host, secret = bench_host(tmp)
        await host.start(mcp=False, tick=False)
        heap.settle()
        try:
            url = f"http://127.0.0.1:{host.http.port}/webhook/events/bench"
            async with bare_peer() as peer_url, bare_server() as server_url:
                bare = {"peer": peer_url, "server": server_url}
                target, key = (bare[layer], None) if layer in bare else (url, secret)
                ids = [f"msg_{uuid.uuid4().hex}" for _ in range(WARM_UP)]
                await blast_elsewhere(target, WARM_UP, 32, key, ids)
                ids = [f"msg_{uuid.uuid4().hex}" for _ in range(count)]
                callgrind.zero()
                _, ok, *_ = await blast_elsewhere(target, count, 32, key, ids)
                callgrind.dump()
                if ok != count:
                    raise SystemExit(f"{layer}: {ok} of {count} answered 2xx")
        finally:
            await host.stop()


def main(count: int, layers: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as pool:
        found = pool.map(
            lambda layer: callgrind.count(
                layer, __file__, ["--serve", layer, "--events", str(count)], Path(tmp)
            ),
            layers,
        )
        counts = dict(zip(layers, found, strict=True))
    print(f"instructions per request, {count} signed events from 32 senders (callgrind)")
    print(f"  {'layer':8s}{'event loop':>12s}{'added':>10s}{'other threads':>15s}")
    before = None
    for layer in layers:
        loop, other = counts[layer]
        added = "" if before is None else f"{(loop - before) / count:+10,.0f}"
        print(f"  {layer:8s}{loop / count:12,.0f}{added:>10s}{other / count:15,.0f}")
        before = loop
    if "peer" in counts and "full" in counts:
        peer, full = counts["peer"][0], counts["full"][0] + counts["full"][1]
        print(f"  peer / full (every thread): {peer / full:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--layers", default=",".join(LAYERS))
    parser.add_argument("--serve", choices=LAYERS, help="(internal) one layer, in callgrind")
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve, args.events))
    else:
        unknown = set(args.layers.split(",")) - set(LAYERS)
        if unknown:
            raise SystemExit(f"unknown layers: {', '.join(sorted(unknown))}")
        main(args.events, args.layers.split(","))
