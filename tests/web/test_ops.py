import re

from bothost.host.wiring import tick_once
from tests.web.conftest import base_url, signed

SAMPLE = re.compile(r"^([a-z_]+)(\{[^}]*\})? (-?[0-9.e+]+)$")


def parse_metrics(text):
    """{(name, labels): value}; every line is a comment or a well-formed sample."""
    values = {}
    for line in text.splitlines():
        if line.startswith("#"):
            assert re.match(r"^# (HELP|TYPE) [a-z_]+ ", line), line
            continue
        match = SAMPLE.match(line)
        assert match, line
        values[(match[1], match[2] or "")] = float(match[3])
    return values


async def test_healthz_reports_each_component(web_host, client):
    async with client.get(base_url(web_host) + "/healthz") as response:
        assert response.status == 200
        health = await response.json()
    assert health["ok"] is True and health["store"]["ok"] is True
    assert health["platforms"]["web"]["ok"] is True and "pages" in health["platforms"]["web"]
    assert health["platforms"]["webhook"]["inbound"] is True
    assert health["events"]["pending"] == 0 and health["tick"]["ok"] is True
    assert health["mcp"] == {}


async def test_healthz_names_no_path_even_on_loopback_without_a_token(
    web_host, client, monkeypatch
):
    # a loopback host without a token shows /healthz whole, to any local account: the
    # database's path (and an error quoting it) named the account running the host
    from bothost.store import StoreError

    url = base_url(web_host) + "/healthz"
    async with client.get(url) as response:
        text = await response.text()
    assert str(web_host.home) not in text and "bothost.db" not in text, text
    assert (await response.json())["store"]["backend"] == "sqlite"

    def failing(db):
        raise StoreError(f"{web_host.store.label}: disk I/O error")

    monkeypatch.setattr(web_host.store, "probe", failing)
    async with client.get(url) as response:
        assert response.status == 503
        text = await response.text()
    assert str(web_host.home) not in text, text
    assert "…/bothost.db: disk I/O error" in (await response.json())["store"]["error"]


async def test_metrics_count_messages_tools_events_ticks_and_briefings(web_host, client, secret):
    url = base_url(web_host)
    web_host.config.agent.approval = "allow"
    for text in ('call wipe_disk {"target": "a"}', 'call wipe_disk {"target": 5}', "help"):
        await (await client.post(url + "/api/chat", json={"session": "m", "text": text})).release()
    body, headers = signed(secret, {"payload": {"summary": "metric me"}})
    await (await client.post(url + "/webhook/events/ops", data=body, headers=headers)).release()
    await (await client.post(url + "/webhook/events/ops", data=body, headers=headers)).release()
    await tick_once(web_host, "test")
    async with client.get(url + "/metrics") as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        metrics = parse_metrics(await response.text())
    assert metrics[("bothost_messages_total", '{platform="web"}')] == 3
    assert metrics[("bothost_turns_total", "")] == 3
    assert metrics[("bothost_tool_calls_total", '{tool="wipe_disk"}')] == 2
    assert metrics[("bothost_tool_errors_total", '{tool="wipe_disk"}')] == 1
    assert metrics[("bothost_events", '{status="done"}')] == 1
    assert metrics[("bothost_tick_duration_seconds_count", "")] == 1
    assert metrics[("bothost_briefings_delivered_total", "")] == 1
    assert metrics[("bothost_web_briefings_total", '{outcome="delivered"}')] == 1
    assert metrics[("bothost_webhook_requests_total", '{outcome="duplicate",route="events"}')] == 1
    assert metrics[("bothost_http_connections", "")] >= 1  # this scrape's own
    assert metrics[("bothost_http_connection_cap", "")] == web_host.http.guard.cap
    assert metrics[("bothost_http_connections_closed_total", '{reason="refused"}')] == 0
    assert metrics[("bothost_store_writable", "")] == 1


async def test_openapi_describes_the_routes_and_the_signature_headers(web_host, client):
    async with client.get(base_url(web_host) + "/openapi.json") as response:
        doc = await response.json()
    assert doc["openapi"].startswith("3.")
    for path in (
        "/api/chat",
        "/webhook/message",
        "/webhook/events/{source}",
        "/healthz",
        "/metrics",
        "/media/{file}",
        "/openapi.json",
    ):
        assert path in doc["paths"], path
    headers = {
        p["name"]
        for p in doc["paths"]["/webhook/events/{source}"]["post"]["parameters"]
        if p["in"] == "header"
    }
    assert headers == {"webhook-id", "webhook-timestamp", "webhook-signature"}
