"""Helpers for driving bundled MCP servers through the official Python SDK client.

`connect(argv, env)` starts a server on stdio with `mcp.Client` and yields the client plus
an `EventLog` of every `event/*`-style notification it pushed (the SDK drops notifications
it does not know unless a `ClientExtension` binds them, which `EventLog` does). The
server's stderr goes to a file in the test's temp dir, shown when the test fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from bothost.mcp_servers.kit import EVENTS_CAPABILITY
from mcp import Client, StdioServerParameters
from mcp.client import ClientExtension, NotificationBinding
from mcp.client.stdio import stdio_client
from pydantic import BaseModel, ConfigDict

from tests.helpers import free_port

ROOT = Path(__file__).resolve().parents[2]
ECHO_SERVER = Path(__file__).with_name("echo_server.py")
PYTHON = sys.executable
WAIT_SECONDS = 10.0
# Starting a server process (Python, aiohttp, the SDK handshake) on a loaded machine.
STARTUP_SECONDS = 30.0


class NotificationParams(BaseModel):
    """Any params object, kept whole."""

    model_config = ConfigDict(extra="allow")


class EventLog(ClientExtension):
    """Binds the given notification methods and records their params in arrival order.

    Its identifier is the kit's events capability (advertised under ``extensions``), so the
    server sends it ``event/*``; with ``wants_events=False`` it binds the same methods under
    another name, as a client would that never asked for them.
    """

    def __init__(self, methods: Sequence[str], wants_events: bool = True) -> None:
        self.identifier = EVENTS_CAPABILITY if wants_events else "dev.bothost/test-events"
        self.methods = list(methods)
        self.received: list[tuple[str, dict[str, Any]]] = []
        self._changed = asyncio.Condition()

    def notifications(self) -> Sequence[NotificationBinding[Any]]:
        return [
            NotificationBinding(method=m, params_type=NotificationParams, handler=self._handler(m))
            for m in self.methods
        ]

    def _handler(self, method: str):
        async def record(params: NotificationParams) -> None:
            async with self._changed:
                self.received.append((method, params.model_dump()))
                self._changed.notify_all()

        return record

    def of(self, method: str) -> list[dict[str, Any]]:
        return [params for name, params in self.received if name == method]

    async def wait_for(self, method: str, count: int = 1, timeout: float = WAIT_SECONDS):
        """The first `count` params of `method`, waiting (bounded) until they arrived."""
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: len(self.of(method)) >= count)
        return self.of(method)[:count]


def server_env(home: Path, **extra: str) -> dict[str, str]:
    """Environment for a server started by the SDK client (which passes only a few vars)."""
    env = {"BOTHOST_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    for name in ("PYTHONPATH", "VIRTUAL_ENV", "LANG"):
        if name in os.environ:
            env[name] = os.environ[name]
    env.update(extra)
    return env


@contextlib.asynccontextmanager
async def connect(
    argv: Sequence[str],
    env: dict[str, str],
    stderr_path: Path,
    events: Sequence[str] = (),
    wants_events: bool = True,
    **client_kwargs: Any,
) -> AsyncIterator[tuple[Client, EventLog]]:
    """An initialized SDK `Client` on a stdio server, and the log of its pushed events.

    The client speaks 2025-11-25 (``mode="legacy"``) unless the test passes ``mode``: the
    kit answers ``server/discover`` too, and these tests are the older clients' check."""
    client_kwargs.setdefault("mode", "legacy")
    log = EventLog(events, wants_events)
    params = StdioServerParameters(command=argv[0], args=list(argv[1:]), env=env, cwd=str(ROOT))
    with stderr_path.open("a") as errlog:
        transport = stdio_client(params, errlog=errlog)
        extensions = [log] if events else None
        async with asyncio.timeout(STARTUP_SECONDS):
            client = Client(transport, extensions=extensions, **client_kwargs)
            await client.__aenter__()
        try:
            yield client, log
        finally:
            await client.__aexit__(None, None, None)


@pytest.fixture
def stderr_log(tmp_path):
    """Where servers write stderr; printed at teardown, so pytest shows it on failure."""
    path = tmp_path / "server-stderr.log"
    path.touch()
    yield path
    print(path.read_text(), file=sys.stderr)


@pytest.fixture
def mcp_stdio(home, stderr_log):
    """`mcp_stdio(argv, env={}, events=[...], **Client kwargs)`: async context of (client, events).

    `env` is added to the minimal server environment (BOTHOST_HOME = the test's home); with
    `events`, the client declares the kit's events capability unless `wants_events=False`.
    """

    def open_client(
        argv: Sequence[str],
        env: dict[str, str] | None = None,
        events: Sequence[str] = (),
        wants_events: bool = True,
        **client_kwargs: Any,
    ):
        environ = server_env(home, **(env or {}))
        return connect(argv, environ, stderr_log, events, wants_events, **client_kwargs)

    return open_client


@pytest.fixture
def echo_argv() -> list[str]:
    """Command that starts the kit's test server (tests/mcp_servers/echo_server.py)."""
    return [PYTHON, str(ECHO_SERVER)]


@pytest.fixture
async def open_meteo():
    """A running fake Open-Meteo; point servers at it with WEATHER_API_BASE=open_meteo.base."""
    from tests.fakes.open_meteo import FakeOpenMeteo

    fake = await FakeOpenMeteo().start()
    yield fake
    await fake.stop()


@pytest.fixture
def weather_argv() -> list[str]:
    """Command that starts the bundled weather server on stdio."""
    return [PYTHON, "-m", "bothost.mcp_servers.weather"]


@pytest.fixture
def mcp_http():
    """`mcp_http(url, events=[...], **Client kwargs)`: async context of (client, events)."""

    @contextlib.asynccontextmanager
    async def open_client(url: str, events: Sequence[str] = (), **client_kwargs: Any):
        log = EventLog(events)
        client_kwargs.setdefault("mode", "legacy")  # as connect(): the older clients' check
        client = Client(url, extensions=[log] if events else None, **client_kwargs)
        async with asyncio.timeout(STARTUP_SECONDS):
            await client.__aenter__()
        try:
            yield client, log
        finally:
            await client.__aexit__(None, None, None)

    return open_client


@pytest.fixture
async def fake():
    """The fake Google APIs (Gmail, Calendar, OAuth) on 127.0.0.1."""
    from tests.fakes.google_api import FakeGoogle

    google = FakeGoogle()
    await google.start()
    yield google
    await google.close()


@pytest.fixture
def unreachable_ssh(tmp_path):
    """An SSH service (its state in tmp_path) with one monitored alias, "gone", that nothing
    answers (port 1)."""
    from bothost.mcp_servers.ssh.aliases import Alias, AliasStore, Monitors
    from bothost.mcp_servers.ssh.connections import ConnectionPool
    from bothost.mcp_servers.ssh.passwords import PasswordCache
    from bothost.mcp_servers.ssh.service import SshService

    store = AliasStore(tmp_path / "aliases.json")
    gone = Alias(
        name="gone", host="127.0.0.1", port=1, user="u", monitors=Monitors(unreachable=True)
    )
    store.add(gone)
    pool = ConnectionPool(tmp_path / "kh", connect_timeout=2)
    return SshService(store, pool, PasswordCache(), tmp_path)


@pytest.fixture
async def echo_server(echo_argv, home, tmp_path):
    """The kit's test server over Streamable HTTP: (its /mcp URL, the process)."""
    port = free_port()
    log = (tmp_path / "http-server.log").open("wb")
    process = await asyncio.create_subprocess_exec(
        *echo_argv,
        "--http",
        f"127.0.0.1:{port}",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        env=dict(os.environ),
    )
    try:
        async with asyncio.timeout(STARTUP_SECONDS):
            while True:
                try:
                    _, writer = await asyncio.open_connection("127.0.0.1", port)
                    writer.close()
                    break
                except OSError:
                    await asyncio.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        if process.returncode is None:
            process.terminate()
            await process.wait()
        log.close()


@pytest.fixture
def echo_url(echo_server):
    return echo_server[0]
