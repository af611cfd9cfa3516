"""Shared pieces of the MCP client tests (a module of its own: `conftest` is ambiguous)."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.helpers import free_port, until

SERVERS = Path(__file__).with_name("servers")
PAGING_SERVER = SERVERS / "paging_server.py"
wait_for = until  # the name these tests use
__all__ = ["PAGING_SERVER", "Recorder", "free_port", "listening", "wait_for"]


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


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
