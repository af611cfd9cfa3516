"""What a session needs from a transport, and the transport errors.

A transport moves JSON-RPC messages and reports two things back: each message it received
(with the id of the client request it arrived in answer to, when the wire says so — only
Streamable HTTP can — and its size), and that it closed for good. A transport that can stop
reading (stdio) asks the session's ``backlog`` between messages — None means there is room,
else an awaitable to wait on first — so a flooding server is slowed down to the pace the
host handles its messages at instead of filling memory.
Everything protocol-level lives in the session; a transport never looks inside a message
beyond routing it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from bothost.mcp.jsonrpc import Message

OnClose = Callable[[str], None]  # reason, e.g. "exited with code 1"
OnSessionLost = Callable[[], Awaitable[None]]
# None while the session can take more messages, else what to await until it can
Backlog = Callable[[], Awaitable[object] | None]


class OnMessage(Protocol):
    def __call__(self, message: Message, related: Any, size: int = 0) -> None:
        """One received message; `related` is the client request id it answers (or None),
        `size` its share of the bytes on the wire (0 when unknown)."""


class TransportError(Exception):
    """The transport could not start or send (command missing, connection refused)."""


class Transport(Protocol):
    pid: int | None
    on_session_lost: OnSessionLost | None
    backlog: Backlog | None  # asked between reads by a transport that can pause its peer

    async def start(self, on_message: OnMessage, on_close: OnClose) -> None: ...

    async def send(self, message: Message, headers: dict[str, str] | None = None) -> None:
        """Write one message; `headers` are what it carries on a transport that has them
        (HTTP: 2026-07-28's Mcp-Method, Mcp-Name, Mcp-Param-*), ignored elsewhere."""

    def negotiated(self, protocol_version: str) -> None:
        """The revision requests go out at from now on: set before ``server/discover`` and
        ``initialize`` are sent and again once settled (HTTP sends it as a header on every
        request, and at 2026-07-28 sends no notifications: no such thing on its wire)."""

    async def opened(self) -> None:
        """Called after ``notifications/initialized`` (HTTP opens its server-push stream)."""

    def abandoned(self, request_id: Any) -> None:
        """The session gave request `request_id` up (timed out, or its caller cancelled):
        nothing read for it is wanted any more (HTTP closes its stream, never resumes it)."""

    async def close(self) -> None: ...
