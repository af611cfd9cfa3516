"""MCP 2026-07-28 in the kit: who asks (per request), ``server/discover``, and listen streams.

2026-07-28 has no handshake and no session: every request names the revision, the client
and its capabilities in ``params._meta``, so what the kit knows of a client is a
:class:`Peer` made per request (a 2025-11-25 session has one, from ``initialize``). A
server pushes nothing outside a request any more: a client that wants notifications sends
``subscriptions/listen``, whose answer is a stream that stays open. The kit acknowledges
it first (``notifications/subscriptions/acknowledged``), then carries on it, stamped with
the stream's id, the ``event/*`` notifications of its watchers — when the listen request's
capabilities declare ``bothost/events``, the same opt-in as at ``initialize``. The kit
changes no lists at run time, so the standard filter kinds are honoured by acknowledging
none of them (the spec's "only what the server supports").
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

STATELESS_PROTOCOLS = ("2026-07-28",)
HANDSHAKE_PROTOCOLS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
UNSUPPORTED_VERSION = -32022  # data: what was requested, what is supported
# The client capability that asks for `event/*` notifications (docs/servers/kit.md). Other
# clients never asked for them: the SDK 1.x client logs a long validation warning for each.
EVENTS_CAPABILITY = "bothost/events"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


@dataclass
class Peer:
    """What one client declared: at ``initialize`` (2025-11-25 and older, for the session),
    or in one request's ``_meta`` (2026-07-28, for that request alone)."""

    protocol_version: str | None = None
    capabilities: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    # notifications/message at this level and above; None sends none (2026-07-28 without
    # a logLevel in the request's _meta: the spec forbids sending any)
    log_level: str | None = "info"

    @property
    def stateless(self) -> bool:
        return self.protocol_version in STATELESS_PROTOCOLS

    @property
    def supports_elicitation(self) -> bool:
        elicitation = self.capabilities.get("elicitation")
        if not isinstance(elicitation, dict):
            return False
        # An empty object means form mode (2025-06-18); 2025-11-25 may list modes.
        return not elicitation or "form" in elicitation

    @property
    def wants_events(self) -> bool:
        """Whether the client declared `EVENTS_CAPABILITY`: under `experimental` (the
        2025-11-25 place for it, where bothost puts it) or `extensions` (where SDK 2.x
        clients advertise theirs)."""
        for place in ("experimental", "extensions"):
            declared = self.capabilities.get(place)
            if isinstance(declared, dict) and isinstance(declared.get(EVENTS_CAPABILITY), dict):
                return True
        return False


def peer_of(meta: Any, log_levels: tuple[str, ...]) -> Peer | None:
    """The 2026-07-28 client a request's ``_meta`` names, or None when it names no revision
    (a 2025-11-25 session's request)."""
    if not isinstance(meta, dict) or not isinstance(meta.get(VERSION_KEY), str):
        return None
    capabilities = meta.get(CAPABILITIES_KEY)
    info = meta.get(CLIENT_INFO_KEY)
    level = meta.get(LOG_LEVEL_KEY)
    return Peer(
        protocol_version=meta[VERSION_KEY],
        capabilities=capabilities if isinstance(capabilities, dict) else {},
        info=info if isinstance(info, dict) else {},
        log_level=level if level in log_levels else None,
    )


def unsupported(requested: str) -> dict[str, Any]:
    """The data of a -32022 error for a revision the kit does not speak."""
    return {"requested": requested[:40], "supported": list(STATELESS_PROTOCOLS)}


def stamped(result: Any, server_info: dict[str, Any]) -> Any:
    """A 2026-07-28 result: ``resultType`` (required there) and the server's info in
    ``_meta`` (which servers should send on every response)."""
    if not isinstance(result, dict):
        return result
    meta = result.get("_meta")
    meta = meta if isinstance(meta, dict) else {}
    return {
        "resultType": "complete",
        **result,
        "_meta": {SERVER_INFO_KEY: server_info, **meta},
    }


@dataclass
class Listener:
    """One open ``subscriptions/listen`` stream."""

    id: Any
    sink: Any  # the Sink its notifications go to (stdout, or the request's SSE stream)
    peer: Peer
    closed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def meta(self) -> dict[str, Any]:
        return {SUBSCRIPTION_KEY: self.id}

    def takes(self, method: str) -> bool:
        """Whether this stream asked for `method` (the spec: nothing unasked is sent)."""
        return method.startswith("event/") and self.peer.wants_events

    def honored(self) -> dict[str, Any]:
        """What the acknowledgement says this stream will carry."""
        return {EVENTS_CAPABILITY: True} if self.peer.wants_events else {}
