"""A 2026-07-28 connection's ``subscriptions/listen`` stream: what the server pushes unasked.

2026-07-28 dropped the GET push stream and ``resources/subscribe``: a client that wants
notifications outside its own requests sends ``subscriptions/listen`` naming what it wants
(SEP-2575), and the server's answer is a stream that stays open — first
``notifications/subscriptions/acknowledged`` with what it will honour, then each
notification stamped with the stream's id, and a result only when the server ends it. The
notifications go through the session's inbound side like any others.

One stream per session asks for the tool list's changes (when the server declares
``tools.listChanged``), the resource list's (``resources.listChanged``), the updates of
the resources the config subscribes to (:mod:`bothost.mcp.subscriptions` sets them), and
our ``event/*`` (``bothost/events``: the kit sends them on a stream whose request
declares that capability, and the filter names it too, since a server must send nothing a
client did not ask for). A new set of resources opens a new stream before the old one is
closed (cancelling a request closes its stream: :meth:`ClientSession.request`). A stream
that ends or fails is opened again after a wait that doubles per failure; a server that
answers -32601 has no listen streams, which is said once and left alone.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from bothost.mcp import jsonrpc
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.tasks import TaskSet

if TYPE_CHECKING:
    from bothost.mcp.session import ClientSession

METHOD = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
EVENTS_FILTER = "bothost/events"  # the filter key our events ride under (bothost.mcp.session)
# A stream is open for as long as the session: its request has no deadline of its own (a
# year stands for "never" in a loop-time timer).
FOREVER = 365 * 24 * 3600.0
ACK_WAIT = 10.0  # how long an old stream stays open while its successor is not acknowledged
# A start waits this long for the first acknowledgement, so a session is ready with its
# pushes flowing; only a server that neither acknowledges nor refuses costs the wait.
FIRST_ACK_WAIT = 5.0
RETRY = 1.0  # seconds before opening a stream again after it ended; doubled per failure
MAX_RETRY = 60.0


class Listen:
    """One session's listen stream (see module docstring)."""

    def __init__(self, session: ClientSession, log: logging.Logger) -> None:
        self.session = session
        self.log = log
        self.uris: list[str] = []  # resources whose updates the stream asks for
        self.honored: dict[str, Any] | None = None  # what the last acknowledgement said
        self.acknowledged = asyncio.Event()  # set by each acknowledgement
        self.unsupported = False  # the server answered -32601
        self._stream: asyncio.Future[Any] | None = None
        self._tasks = TaskSet(log, "listen stream")

    def filter(self) -> dict[str, Any]:
        """The ``notifications`` the stream asks for (only what the server declares)."""
        caps = self.session.capabilities
        wanted: dict[str, Any] = {EVENTS_FILTER: True}
        for kind, key in (("tools", "toolsListChanged"), ("resources", "resourcesListChanged")):
            declared = caps.get(kind)
            if isinstance(declared, dict) and declared.get("listChanged"):
                wanted[key] = True
        if self.uris:
            wanted["resourceSubscriptions"] = list(self.uris)
        return wanted

    def open(self, uris: list[str] | None = None) -> None:
        """Open the stream (again, with `uris` when given); the old one closes once the
        new one is acknowledged, so nothing is missed between them."""
        if uris is not None:
            self.uris = list(uris)
        if self.unsupported or self.session.closed:
            return
        old, self._stream = self._stream, self._tasks.spawn(self._run())
        if old is not None:
            self._tasks.spawn(self._close_after_ack(old))

    async def _close_after_ack(self, old: asyncio.Future[Any]) -> None:
        self.acknowledged.clear()
        try:
            async with asyncio.timeout(ACK_WAIT):
                await self.acknowledged.wait()
        except TimeoutError:
            pass
        old.cancel()

    async def settled(self, timeout: float = FIRST_ACK_WAIT) -> None:
        """Wait (bounded) until the stream is acknowledged or has failed."""
        stream = self._stream
        if stream is None:
            return
        acked = asyncio.ensure_future(self.acknowledged.wait())
        try:
            await asyncio.wait([acked, stream], timeout=timeout, return_when="FIRST_COMPLETED")
        finally:
            acked.cancel()

    def take(self, method: str, params: dict[str, Any]) -> None:
        """An acknowledgement from the server (the inbound side hands it on)."""
        if method == ACKNOWLEDGED:
            honored = params.get("notifications")
            self.honored = honored if isinstance(honored, dict) else {}
            self.acknowledged.set()

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await self._tasks.wait()

    async def _run(self) -> None:
        failures = 0
        while not self.session.closed:
            self.acknowledged.clear()
            try:
                await self.session.request(
                    METHOD, {"notifications": self.filter()}, timeout=FOREVER
                )
                self.log.info("the server ended its listen stream; opening another")
            except McpError as exc:
                if self.session.closed:
                    return
                if exc.code == jsonrpc.METHOD_NOT_FOUND:
                    self.unsupported = True
                    self.log.info(
                        "the server has no %s: it pushes nothing outside requests", METHOD
                    )
                    return
                self.log.warning("listen stream ended: %s", exc.message)
            failures = 0 if self.acknowledged.is_set() else failures + 1
            await asyncio.sleep(min(RETRY * 2**failures, MAX_RETRY))


def unstamped(params: dict[str, Any]) -> dict[str, Any]:
    """A listen stream's notification params without the stream's id in ``_meta`` (an
    event's payload is what the server meant to say, not how it was delivered)."""
    meta = params.get("_meta")
    if not isinstance(meta, dict) or SUBSCRIPTION_KEY not in meta:
        return params
    rest = {k: v for k, v in meta.items() if k != SUBSCRIPTION_KEY}
    out = {k: v for k, v in params.items() if k != "_meta"}
    if rest:
        out["_meta"] = rest
    return out
