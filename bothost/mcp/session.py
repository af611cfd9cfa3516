"""The client side of one MCP connection: its lifecycle, and the parts it is made of.

A :class:`ClientSession` sits on a transport (stdio or Streamable HTTP). This module owns
its lifecycle — the revision settled (:mod:`bothost.mcp.revision`: ``server/discover``,
else ``initialize``), a lost session made again, every pending request failed at once when
the transport closes — and where each incoming message goes. The rest is in its parts:
requests and their answers in :mod:`bothost.mcp.outgoing`, the tool list and tool calls in
:mod:`bothost.mcp.toolset`, and the answers to the inbound side in
:mod:`bothost.mcp.routing`. What the *server* sends unasked — requests such as
``elicitation/create`` and notifications such as ``event/*`` — is handled in
:mod:`bothost.mcp.inbound`; turning tool results into text and media in
:mod:`bothost.mcp.content`.

The session owns its state (pending calls, the tool list, the server's info); the inbound
side reaches it only through the few methods of :class:`~bothost.mcp.inbound.InboundOwner`
(send, whose question is it, whose progress is it, move or pause a call's deadline,
re-list, hand over an event) and never writes it. A server's question is routed by the
:class:`~bothost.mcp.elicitation.Asker` each pending call carries (see
:meth:`ClientSession.asker_for`).
"""

from __future__ import annotations

import importlib.metadata
import itertools
import logging
from pathlib import Path
from typing import Any

from bothost.logs.rate import RateLimitedLog
from bothost.mcp import client_tasks, inbound, jsonrpc, listen, revision, sampling, taskcall
from bothost.mcp.elicitation import Ask
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.outgoing import REQUEST_TIMEOUT, Callback, Outgoing, Pending
from bothost.mcp.routing import HELD_WHILE_ASKING, Routing
from bothost.mcp.toolset import (
    MAX_TOOL_BYTES,
    MAX_TOOL_PAGES,
    MAX_TOOLS,
    MAX_TOOLS_BYTES,
    Tools,
)
from bothost.mcp.transport import Transport

# what was defined here before the parts were split out, for those who import it from here
__all__ = [
    "CLIENT_NAME",
    "EVENTS_CAPABILITY",
    "HELD_WHILE_ASKING",
    "MAX_TOOLS",
    "MAX_TOOLS_BYTES",
    "MAX_TOOL_BYTES",
    "MAX_TOOL_PAGES",
    "PROTOCOL_VERSION",
    "REQUEST_TIMEOUT",
    "SUPPORTED_VERSIONS",
    "Callback",
    "ClientSession",
    "Pending",
]

# What initialize offers, once server/discover showed an older server (bothost.mcp.revision).
PROTOCOL_VERSION = revision.HANDSHAKE[0]
# Older revisions a server may answer initialize with; the wire format is the same in all.
SUPPORTED_VERSIONS = revision.HANDSHAKE
CLIENT_NAME = "bothost"
try:
    CLIENT_VERSION = importlib.metadata.version("bothost")
except importlib.metadata.PackageNotFoundError:  # running from a bare checkout
    CLIENT_VERSION = "0.0.0"
# The experimental client capability that asks a server for its `event/*` notifications
# (the bundled servers' kit sends them only then: docs/servers/kit.md).
EVENTS_CAPABILITY = "bothost/events"
INITIALIZE_TIMEOUT = 30.0  # a server slower than this to start is reported as failed


class ClientSession(Outgoing, Tools, Routing):
    """One initialized MCP connection (see module docstring)."""

    def __init__(
        self,
        transport: Transport,
        *,
        name: str,
        log: logging.Logger,
        media_dir: Path | None = None,
        ask: Ask | None = None,
        roots: list[dict[str, str]] | None = None,
        on_events: Callback | None = None,
        on_tools_changed: Callback | None = None,
        on_closed: Callback | None = None,
        on_renewal: Callback | None = None,
        on_resources: Callback | None = None,
        client_info: dict[str, str] | None = None,
        elicitation: bool = True,
        sample: sampling.Sample | None = None,
        protocol: str = "auto",
        listens: bool = True,
    ) -> None:
        self.transport = transport
        self.protocol = protocol  # "auto", or the revision pinned (bothost.mcp.revision)
        self.name = name
        self.log = log
        # answers to requests nobody made are the server's to repeat: a line a minute
        self.complaints = RateLimitedLog(log)
        self.media_dir = media_dir
        self.ask = ask
        # Advertised even without a default `ask`: callers pass one per call (the person in
        # the conversation), and with nobody to ask the answer is a plain `cancel`.
        self.elicitation = elicitation
        # the host's sampler, set only for a server with `sampling: true` in config: the
        # capability is declared only then (bothost.mcp.sampling)
        self.sample = sample
        self.roots = roots or []
        # ([Event, …]): the server's event/* notifications, a backlog at once
        self.on_events = on_events
        self.on_tools_changed = on_tools_changed
        self.on_closed = on_closed
        self.on_renewal = on_renewal  # called as a renewal starts and as it ends
        # (method, params) of resources/updated and resources/list_changed: subscriptions
        self.on_resources = on_resources
        # sessions made again because the server forgot ours (a restarted server): shown by
        # `mcp list`, since the server is "ready" before and after and nothing else says so
        self.renewals = 0
        self.renewing = False
        self.client_info = client_info or {"name": CLIENT_NAME, "version": CLIENT_VERSION}
        self.protocol_version: str | None = None
        self.speaking: str | None = None  # the revision requests go out at (set per step)
        self.server_info: dict[str, Any] = {}
        self.capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.tools: list[dict[str, Any]] = []
        self.tools_list_requests = 0  # how often tools/list was sent (coalescing is tested)
        self.closed_reason: str | None = None
        self.pending: dict[Any, Pending] = {}
        self.task_calls: set[taskcall.TaskCall] = set()  # tools/call run as tasks, in flight
        self._ids = itertools.count(1)
        self._solo_askers = itertools.count(1)  # keys for calls that brought a bare callable
        self.inbound = inbound.Inbound(self, name=name, log=log, roots=self.roots)
        # what the server pushes at 2026-07-28 (bothost.mcp.listen); `listens` False for a
        # one-shot command, after which a push is nobody's
        self.listening = listen.Listen(self, log) if listens else None
        # the level asked of a 2026-07-28 server in each request's _meta (config log_level;
        # bothost.mcp.serverlog.set_level), where logging/setLevel no longer is
        self.log_level: str | None = None

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self, timeout: float = INITIALIZE_TIMEOUT) -> None:
        """Start the transport and settle the revision: server/discover, else initialize."""
        self.transport.on_session_lost = self._reinitialize
        self.transport.backlog = self.inbound.room
        await self.transport.start(self._on_message, self._on_close)
        await revision.negotiate(self, timeout)
        if self.listening is not None and revision.stateless(self.protocol_version):
            self.listening.open()
            await self.listening.settled()

    def client_capabilities(self, version: str | None = None) -> dict[str, Any]:
        # EVENTS_CAPABILITY: servers that push event/* (ours) send them only to clients
        # that ask, because other clients log every unknown notification as an error; in
        # 2026-07-28 it rides in every request's _meta, `experimental` being kept there.
        # `tasks`: we make task-augmented calls (bothost.mcp.taskcall), and run as tasks the
        # elicitations and samplings we answer at all (bothost.mcp.client_tasks); 2026-07-28
        # moved tasks to an extension, and roots lost listChanged.
        caps: dict[str, Any] = {"experimental": {EVENTS_CAPABILITY: {}}}
        if revision.stateless(version):
            caps["roots"] = {}
        else:
            ours = client_tasks.capability(
                elicitation=self.elicitation, sampling=self.sample is not None
            )
            caps.update(roots={"listChanged": False}, tasks=ours)
        if self.elicitation:  # url: the link is shown to the person (bothost.mcp.elicitation)
            caps["elicitation"] = {"form": {}, "url": {}}
        if self.sample is not None:
            caps["sampling"] = dict(sampling.CAPABILITY)
        return caps

    def _speak(self, version: str) -> None:
        """Send the requests from now on at `version` (its header, and its _meta if any)."""
        self.speaking = version
        self.transport.negotiated(version)

    async def discover(self, version: str, timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
        """Ask ``server/discover`` at `version` (no state changes but what is sent)."""
        self._speak(version)
        return await self.request("server/discover", {}, timeout=timeout)

    def adopt(self, result: dict[str, Any], version: str) -> None:
        """Take a ``server/discover`` answer: the connection speaks stateless `version`."""
        found = revision.discovered(result)
        self._speak(version)
        self.protocol_version = version
        self.server_info = found["serverInfo"]
        self.capabilities = found["capabilities"]
        self.instructions = found["instructions"]
        self.log.info(
            "discovered %s %s (protocol %s)",
            self.server_info.get("name", "?"),
            self.server_info.get("version", ""),
            version,
        )

    async def initialize(self, timeout: float = INITIALIZE_TIMEOUT) -> None:
        self._speak(PROTOCOL_VERSION)  # the header goes on initialize too (2026-07-28 asks)
        answer = await self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": self.client_capabilities(),
                "clientInfo": self.client_info,
            },
            timeout=timeout,
        )
        version = answer.get("protocolVersion")
        if version not in SUPPORTED_VERSIONS:
            # the spec has a client disconnect here; the runner closes the session
            spoken = ", ".join(SUPPORTED_VERSIONS[:-1]) + f" and {SUPPORTED_VERSIONS[-1]}"
            raise McpError(
                jsonrpc.INVALID_REQUEST,
                f"the server answered with protocol revision {version!r:.40}, which bothost "
                f"does not speak (it speaks {spoken})",
            )
        if version != PROTOCOL_VERSION:
            self.log.info(
                "server negotiated older protocol revision %s (we speak %s)",
                version,
                PROTOCOL_VERSION,
            )
        self.protocol_version = version
        self.server_info = answer.get("serverInfo") or {}
        self.capabilities = answer.get("capabilities") or {}
        self.instructions = answer.get("instructions")
        self._speak(version)
        await self.notify("notifications/initialized")
        await self.transport.opened()
        self.log.info(
            "initialized %s %s (protocol %s)",
            self.server_info.get("name", "?"),
            self.server_info.get("version", ""),
            version,
        )

    async def _reinitialize(self) -> None:
        self.log.warning("server lost our session; initializing again")
        self._renewing(True)
        try:
            await self.initialize()
            self.renewals += 1
        finally:
            self._renewing(False)

    def _renewing(self, now: bool) -> None:
        self.renewing = now
        if self.on_renewal is not None:
            try:
                self.on_renewal()
            except Exception:  # boundary: the owner's listener
                self.log.exception("renewal listener failed")

    async def close(self) -> None:
        if self.listening is not None:
            await self.listening.close()
        await self.inbound.close()
        await self.transport.close()

    @property
    def closed(self) -> bool:
        return self.closed_reason is not None

    def _on_close(self, reason: str) -> None:
        if self.closed_reason is not None:
            return
        self.closed_reason = reason
        error = McpError(jsonrpc.CONNECTION_CLOSED, f"server {reason}")
        for pending in self.pending.values():  # every waiting call wakes now
            if not pending.future.done():
                pending.future.set_exception(error)
        if self.on_closed is not None:
            self.on_closed(reason)

    # -- incoming ----------------------------------------------------------------------

    def _on_message(self, message: jsonrpc.Message, related: Any, size: int = 0) -> None:
        if "method" in message:  # a server's notification (events: the flood) or request
            if "id" in message:
                self.inbound.on_request(message, related)
            else:
                self.inbound.on_notification(message, size)
        elif "id" in message and ("result" in message or "error" in message):  # an answer
            self._answered(message)
