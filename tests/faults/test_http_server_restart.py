"""A Streamable HTTP server restarted under a running client: its push stream comes back.

The server (``restart_server.py``) is killed and started again on the same listening
socket; every session id it gave is unknown to the new run, and the client's GET stream,
resumed after the kill, is answered 400 "No valid session" (as the TypeScript SDK's example
servers answer) or 404. The client must make a new session and open its push stream again
by itself, with nobody calling a tool, and the status must say the session was renewed.
When the server keeps its events on disk (an event store), what it pushed while the client
had no stream is replayed after the ``Last-Event-ID`` the client carries into the new
session, so the event numbers the host stored run without a gap.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bothost.cli.mcp import renewed
from bothost.config import McpServerConfig
from bothost.mcp.manager import McpManager
from bothost.store import Store, core_migrations
from tests.helpers import each, until

SERVER = Path(__file__).with_name("restart_server.py")
WAIT = 30.0  # seconds for each condition; a second or two on an idle machine


class Restartable:
    """restart_server.py on a listening socket this test holds across the server's runs."""

    def __init__(self, tmp_path: Path, env: dict[str, str]) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.set_inheritable(True)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/mcp"
        self.state, self.log = tmp_path / "pushed", tmp_path / "server.log"
        self.env = {**os.environ, **env}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        fd = self.sock.fileno()
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(SERVER), str(fd), str(self.state)],
                pass_fds=(fd,),
                stdout=log,
                stderr=log,
                env=self.env,
                start_new_session=True,
            )

    def kill(self) -> None:
        assert self.process is not None
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def pushed(self) -> int:
        return len(self.state.read_text().splitlines()) if self.state.exists() else 0


@pytest.fixture
async def store(home):
    store = Store(home / "bothost.db", core_migrations())
    yield store
    store.close()


@pytest.fixture
async def make_manager(home, store):
    """An McpManager recording each event's payload as a row of ``events``."""
    managers: list[McpManager] = []

    async def on_event(source, type, payload):
        row = {
            "source": source,
            "type": type,
            "payload": json.dumps(payload),
            "received_at": time.time(),
            "dedupe_key": f"{source}:{type}:{payload['id']}",
        }
        await store.run(lambda db: db.insert("events", row))

    async def make(servers, **kwargs):
        manager = McpManager(servers, store, home, on_events=each(on_event), **kwargs)
        managers.append(manager)
        await manager.start(wait=WAIT)
        return manager

    yield make
    for manager in managers:
        await manager.stop()


def state(manager, name):
    return next(s for s in manager.status() if s.name == name)


@contextmanager
def restartable(tmp_path: Path, **env: str) -> Iterator[Restartable]:
    server = Restartable(tmp_path, env)
    server.start()
    try:
        yield server
    finally:
        server.kill()
        server.sock.close()


def numbers(store) -> list[int]:
    rows = store.call(lambda db: db.query("SELECT payload FROM events WHERE source = 'r'"))
    return sorted(json.loads(row["payload"])["n"] for row in rows)


async def restart_and_wait(server: Restartable, store, more: int) -> list[int]:
    """Kill the server once events flow, start it again, and wait until `more` events
    past the kill have arrived; the stored numbers."""
    await until(lambda: len(numbers(store)) >= 3, timeout=WAIT)
    server.kill()
    killed_at = server.pushed()
    server.start()
    await until(lambda: max(numbers(store)) >= killed_at + more, timeout=WAIT)
    return numbers(store)


@pytest.mark.parametrize("unknown", ["400", "404"])
async def test_a_restarted_server_gets_a_new_session_and_its_pushes_arrive(
    tmp_path,
    make_manager,
    store,
    unknown,
):
    # before: a 400 on the resumed GET was read as "this server has no push stream": the
    # server stayed "ready" with no session and no stream, and nothing it pushed arrived
    with restartable(tmp_path, RESTART_UNKNOWN=unknown) as server:
        # retry=False: no restart of the connection by the manager could mend it either
        manager = await make_manager({"r": McpServerConfig(url=server.url)}, retry=False)
        got = await restart_and_wait(server, store, more=5)
        status = state(manager, "r")
        assert (status.state, status.restarts, status.renewals) == ("ready", 0, 1), status
        assert renewed(status).startswith("session renewed once: the server forgot it")
        # this server makes an event only while a stream is open: none may be missing
        assert got == list(range(got[0], got[-1] + 1))


async def test_what_a_restarted_server_kept_is_replayed_into_the_new_session(
    tmp_path,
    make_manager,
    store,
):
    # the server writes every event to disk, a stream open or not, and replays after the
    # Last-Event-ID it is given; its second run makes 10 events before it serves anyone:
    # a fresh GET in the new session never asks for them, a gap in the numbers
    with restartable(tmp_path, RESTART_STORE="1", RESTART_BACKLOG="10") as server:
        manager = await make_manager({"r": McpServerConfig(url=server.url)}, retry=False)
        got = await restart_and_wait(server, store, more=20)
        assert state(manager, "r").renewals == 1
        assert got == list(range(got[0], got[-1] + 1)), "events pushed across the restart lost"
