"""What a session needs from a transport, and the transport errors.

A transport moves JSON-RPC messages and reports two things back: each message it received
(with the id of the client request it arrived in answer to, when the wire says so — only
Streamable HTTP can), and that it closed for good. Everything protocol-level lives in the
session; a transport never looks inside a message beyond routing it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from bothost.mcp.jsonrpc import Message

OnMessage = Callable[[Message, Any], None]  # (message, related client request id or None)
OnClose = Callable[[str], None]  # reason, e.g. "exited with code 1"
OnSessionLost = Callable[[], Awaitable[None]]


class TransportError(Exception):
    """The transport could not start or send (command missing, connection refused)."""


class Transport(Protocol):
    pid: int | None
    on_session_lost: OnSessionLost | None

    async def start(self, on_message: OnMessage, on_close: OnClose) -> None: ...

    async def send(self, message: Message) -> None: ...

    def negotiated(self, protocol_version: str) -> None:
        """Called once initialize has answered (HTTP sends the version on later requests)."""

    async def opened(self) -> None:
        """Called after ``notifications/initialized`` (HTTP opens its server-push stream)."""

    async def close(self) -> None: ...
