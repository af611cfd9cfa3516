import json

import aiohttp
import pytest

from bothost.config.schema import ConfigError
from bothost.hookspecs import hookimpl
from bothost.http.server import HOST, HttpError
from bothost.models import Event
from tests.helpers import make_host


async def test_http_app_starts_serves_and_stops(home):
    host = make_host(home)

    class Routes:
        @hookimpl
        def register_routes(self, app):
            async def hello(request):
                from aiohttp import web

                return web.Response(text="hi from " + type(request.app[HOST]).__name__)

            app.router.add_get("/hello", hello)

    host.pm.register(Routes(), name="routes")
    await host.start(mcp=False, tick=False)
    base = f"http://127.0.0.1:{host.http.port}"
    async with aiohttp.ClientSession() as client:
        async with client.get(base + "/healthz") as response:
            assert response.status == 200
            assert (await response.json())["store"]["ok"] is True
        async with client.get(base + "/hello") as response:
            assert await response.text() == "hi from Host"
    await host.stop()
    async with aiohttp.ClientSession() as client:
        with pytest.raises(aiohttp.ClientConnectionError):
            await client.get(base + "/healthz")


async def test_non_loopback_bind_requires_a_token(home):
    host = make_host(home, {"platforms": {"web": {"host": "0.0.0.0"}}})
    with pytest.raises(ConfigError, match="requires platforms.web.token"):
        await host.start(mcp=False, tick=False)
    await host.stop()


async def test_a_port_in_use_names_the_fix(home):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        host = make_host(home, {"platforms": {"web": {"port": port}}})
        with pytest.raises(HttpError) as raised:
            await host.start(mcp=False, tick=False)
        await host.stop()
    assert str(raised.value) == (
        f"platforms.web: cannot listen on 127.0.0.1:{port}: Address already in use; another "
        "program (or another bothost run) holds the port: stop it, or set platforms.web.port "
        "to a free port"
    )


async def test_a_failing_runtime_hook_is_isolated(home, caplog):
    host = make_host(home)
    seen = []

    class Broken:
        @hookimpl
        async def startup(self, host):
            raise RuntimeError("broken plugin")

    class Fine:
        @hookimpl
        def startup(self, host):
            seen.append("fine")

    host.pm.register(Broken(), name="broken")
    host.pm.register(Fine(), name="fine")
    await host.start(serve_http=False, mcp=False, tick=False)
    await host.stop()
    assert seen == ["fine"]
    assert "plugin broken failed in hook startup" in caplog.text


async def test_supervised_task_is_restarted_after_a_failure(home, monkeypatch):
    import asyncio

    from bothost.host import supervisor

    monkeypatch.setattr(supervisor, "FIRST_BACKOFF", 0.01)
    host = make_host(home)
    await host.start(serve_http=False, mcp=False, tick=False)
    runs = []
    done = asyncio.Event()

    async def flaky():
        runs.append(1)
        if len(runs) < 3:
            raise RuntimeError("flaky")
        done.set()

    host.supervise("flaky", flaky)
    await asyncio.wait_for(done.wait(), 5)
    assert len(runs) == 3 and host.supervisor.failures["flaky"] == 2
    await host.stop()


async def test_event_received_hook_can_drop(home):
    host = make_host(home)

    class Dropper:
        @hookimpl
        def event_received(self, event):
            if event.payload.get("spam"):
                return False
            event.payload["enriched"] = True

    host.pm.register(Dropper(), name="dropper")
    await host.start(serve_http=False, mcp=False, tick=False)
    assert await host.ingest_event("test", "event/x", {"spam": True}) is None
    row_id = await host.ingest_event("test", "event/x", {"id": "1"})
    payload = host.store.call(
        lambda db: db.one("SELECT * FROM events WHERE id = ?", [row_id])["payload"]
    )
    await host.stop()
    assert json.loads(payload) == {"id": "1", "enriched": True}


async def test_events_a_plugin_drops_are_a_line_a_minute_per_source_not_one_each(home, caplog):
    host = make_host(home)

    class Dropper:
        @hookimpl
        def event_received(self, event):
            return False

    host.pm.register(Dropper(), name="dropper")
    await host.start(serve_http=False, mcp=False, tick=False)
    with caplog.at_level("INFO", "bothost.events.intake"):
        for n in range(1_000):  # each producer's way in, from two sources
            for source in ("flood", "other"):
                await host.ingest_event(source, "event/x", {"id": n})
                await host.ingest_webhook_event(f"{source}{n}", source, "event/x", {"id": n})
            await host.take_events([Event("flood", "event/x", {"id": n})])
    await host.stop()
    lines = [r.getMessage() for r in caplog.records if "dropped by a plugin" in r.getMessage()]
    assert {line.split()[1] for line in lines} == {"flood/event/x", "other/event/x"}
    assert len(lines) <= 10, lines[:3]  # a line per source and minute; one per event was 5,000
