"""Shared pieces of the MCP client tests (a module of its own: `conftest` is ambiguous)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers import free_port, until

SERVERS = Path(__file__).with_name("servers")
PAGING_SERVER = SERVERS / "paging_server.py"
wait_for = until  # the name these tests use
START_BOUND = 30.0  # seconds for a Node server to listen; it takes about one on a quiet machine
__all__ = [
    "PAGING_SERVER",
    "Recorder",
    "free_port",
    "listening",
    "listening_process",
    "wait_for",
]


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def listening_process(
    command: list[str], port: int, log_path: Path, env: dict[str, str]
) -> Iterator[None]:
    """Run `command` in its own process group until it listens on `port`; stop it after."""
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            command, stdout=log, stderr=log, env={**os.environ, **env}, start_new_session=True
        )
    try:
        deadline = time.monotonic() + START_BOUND
        while not listening(port):
            assert proc.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, f"{command[0]} did not listen"
            time.sleep(0.05)
        yield
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


class Recorder:
    """Collects what a session reports: events, tool changes, closes."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict]] = []
        self.tool_changes: list[list[dict]] = []
        self.closed: list[str] = []

    async def on_events(self, events):
        self.events.extend((e.source, e.type, e.payload) for e in events)

    def on_tools_changed(self, tools):
        self.tool_changes.append(tools)

    def on_closed(self, reason):
        self.closed.append(reason)
