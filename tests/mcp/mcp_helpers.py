"""Shared pieces of the MCP client tests (a module of its own: `conftest` is ambiguous)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from pathlib import Path

SERVERS = Path(__file__).with_name("servers")
PAGING_SERVER = SERVERS / "paging_server.py"
WAIT = 10.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


async def wait_for(condition: Callable[[], object], timeout: float = WAIT) -> None:
    """Poll `condition` until it is true; fail after `timeout` seconds."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


class Recorder:
    """Collects what a session reports: events, tool changes, closes."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict]] = []
        self.tool_changes: list[list[dict]] = []
        self.closed: list[str] = []

    async def on_event(self, source, type, payload):
        self.events.append((source, type, payload))

    def on_tools_changed(self, tools):
        self.tool_changes.append(tools)

    def on_closed(self, reason):
        self.closed.append(reason)
