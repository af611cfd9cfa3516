"""Every bundled watcher counts an event as sent only once a client received it.

Each server is built in-process against its fake (Open-Meteo, Google) or an unreachable
ssh alias, and its watcher is polled by hand while the server has either no client at all
or only a Streamable HTTP client that opened no GET stream (so it cannot receive watcher
events), or only a client that did not declare the events capability (so it never asked
for them). Those polls must not use up the event: it arrives, once, when a listening client
is there.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from bothost.mcp_servers.google.auth import SCOPES
from bothost.mcp_servers.google.client import GoogleClient
from bothost.mcp_servers.kit import EVENTS_CAPABILITY, Outbox, Server
from bothost.mcp_servers.kit.http import HttpSession
from bothost.mcp_servers.ssh.aliases import Alias, AliasStore, Monitors
from bothost.mcp_servers.ssh.connections import ConnectionPool
from bothost.mcp_servers.ssh.passwords import PasswordCache
from bothost.mcp_servers.ssh.server import build_server as build_ssh
from bothost.mcp_servers.ssh.service import SshService
from bothost.mcp_servers.weather.api import OpenMeteo
from bothost.mcp_servers.weather.server import build_server as build_weather

from tests.fakes.open_meteo import ZURICH

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def initialize(capabilities: dict[str, Any]) -> dict[str, Any]:
    params = {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {}}
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


WANTS_EVENTS = {"experimental": {EVENTS_CAPABILITY: {}}}


class Harness:
    """A server whose one watcher the test polls by hand, and the clients it connects."""

    def __init__(self, server: Server) -> None:
        self.server = server
        (watcher,) = server.watchers
        self.poll: Callable[[], Awaitable[None]] = lambda: watcher.fn(server)
        # Polled by hand only: a client's handshake must not start the background loop.
        server.watchers = []
        self.heard: list[dict[str, Any]] = []
        self.unasked: list[dict[str, Any]] = []  # what a client that did not ask received

    async def connect_deaf_http_client(self) -> None:
        """An HTTP client that finished the handshake but never opened its GET stream."""
        session = HttpSession(self.server)
        await session.protocol.receive(initialize(WANTS_EVENTS), self.ignore)
        session.protocol.receive(INITIALIZED)

    async def connect_uninterested_client(self) -> None:
        """A client that listens but did not declare the events capability."""
        deaf: list[dict[str, Any]] = []

        async def sink(message: dict[str, Any]) -> None:
            deaf.append(message)

        session = self.server.open_session(sink)
        await session.receive(initialize({"experimental": {}}))
        session.receive(INITIALIZED)
        self.unasked = deaf

    async def connect_listening_client(self) -> None:
        async def sink(message: dict[str, Any]) -> None:
            if message.get("method"):  # not the answer to initialize
                self.heard.append(message)

        session = self.server.open_session(sink)
        await session.receive(initialize(WANTS_EVENTS))
        session.receive(INITIALIZED)

    @staticmethod
    async def ignore(message: dict[str, Any]) -> None:
        pass

    def events(self) -> list[str]:
        return [m["method"] for m in self.heard if m["method"].startswith("event/")]


ABSENT = ["no client", "an HTTP client without a GET stream", "a client that did not ask"]


@pytest.fixture(params=ABSENT)
def absent(request) -> str:
    """Who is there while the event happens."""
    return request.param


async def check_sent_only_when_heard(harness: Harness, event: str, absent: str) -> None:
    if absent == ABSENT[1]:
        await harness.connect_deaf_http_client()
    elif absent == ABSENT[2]:
        await harness.connect_uninterested_client()
    await harness.poll()
    await harness.poll()
    await harness.connect_listening_client()
    assert harness.events() == []
    await harness.poll()
    assert harness.events() == [event]
    await harness.poll()
    assert harness.events() == [event]  # now it is sent: never again
    assert not [m for m in harness.unasked if m.get("method", "").startswith("event/")]


async def test_weather_alert_waits_for_a_client(open_meteo, home, monkeypatch, absent):
    for name, value in {
        "WEATHER_WATCH": "Zurich",
        "WEATHER_ALERT_RAIN_PROBABILITY": "70",
        "WEATHER_ALERT_TEMPERATURE_DROP": "off",
        "WEATHER_ALERT_WIND_GUSTS": "off",
        "WEATHER_ALERT_AQI": "off",
    }.items():
        monkeypatch.setenv(name, value)
    open_meteo.at(ZURICH).hourly_precipitation_probability = [90]
    api = OpenMeteo(open_meteo.base)
    try:
        harness = Harness(build_weather(api))
        await check_sent_only_when_heard(harness, "event/weather_alert", absent)
    finally:
        await api.close()


@pytest.fixture
def google(fake, home, monkeypatch):
    """`google(server, api, version)`: a `GoogleClient` authorized against the fake."""
    monkeypatch.setenv("GOOGLE_API_ENDPOINT", fake.url)
    monkeypatch.setenv("GOOGLE_TOKEN_URI", f"{fake.url}/token")

    def client(server: str, api: str, version: str) -> GoogleClient:
        token = home / "secrets" / f"google-{server}.json"
        token.parent.mkdir(mode=0o700, exist_ok=True)
        token.write_text(json.dumps(fake.authorized_user(SCOPES[server])))
        return GoogleClient(server, api, version, token_file=token)

    return client


async def test_new_email_waits_for_a_client(google, fake, absent):
    from bothost.mcp_servers.gmail.server import build_server

    harness = Harness(build_server(google("gmail", "gmail", "v1")))
    await harness.poll()  # the first look only learns where the mailbox is
    fake.deliver("Ana <ana@corp.com>", "Budget review", "Moved to 14:00.")
    await check_sent_only_when_heard(harness, "event/new_email", absent)


async def test_new_calendar_event_waits_for_a_client(google, fake, absent):
    from bothost.mcp_servers.gcal.server import build_server

    harness = Harness(build_server(google("gcal", "calendar", "v3")))
    await harness.poll()  # the first look only learns what is there
    fake.add_event("Budget review", datetime.now(UTC).replace(microsecond=0) + timedelta(days=1))
    await check_sent_only_when_heard(harness, "event/new_calendar_event", absent)


async def test_ssh_alert_waits_for_a_client(tmp_path, absent):
    store = AliasStore(tmp_path / "aliases.json")
    unreachable = Monitors(unreachable=True)
    store.add(Alias(name="gone", host="127.0.0.1", port=1, user="u", monitors=unreachable))
    pool = ConnectionPool(tmp_path / "known_hosts", connect_timeout=2)
    svc = SshService(store, pool, PasswordCache(), tmp_path)
    await check_sent_only_when_heard(Harness(build_ssh(svc)), "event/ssh_alert", absent)


async def test_after_a_miss_the_outbox_sends_nothing_more_that_poll():
    """A later event must not overtake one that waits for a client (positions move in order)."""
    clients = [0, 1, 1]  # how many clients get each push: none at first, then one
    pushed: list[str] = []

    async def notify(method: str, params: dict[str, Any]) -> int:
        pushed.append(params["id"])
        return clients.pop(0)

    outbox = Outbox(notify)
    assert not await outbox.send("event/x", {"id": "1"})
    assert not await outbox.send("event/x", {"id": "2"})
    assert pushed == ["1"] and outbox.sent == 0
    again = Outbox(notify)  # the next poll
    assert await again.send("event/x", {"id": "1"}) and await again.send("event/x", {"id": "2"})
    assert pushed == ["1", "1", "2"] and again.sent == 2
