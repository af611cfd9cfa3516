"""Resource subscriptions: the resources a server's config names, subscribed, and each update
an event (``event/resource_updated``).

A server entry's ``subscribe`` lists URIs and globs (``file:///notes/*.md``). Once the server
is ready — and again after a restart or a renewed session, since a server forgets what a
session it lost had subscribed — each URI, and each URI of ``resources/list`` a glob matches
(at most ``MAX_SUBSCRIPTIONS``), gets a ``resources/subscribe``. A server that does not
declare ``capabilities.resources.subscribe`` gets none, and that is said once, naming the key.

A ``notifications/resources/updated`` marks its URI for reading; one worker reads the marked
URIs one at a time and hands each as an event to the session's owner by the same path as the
server's own ``event/*`` pushes (:meth:`ClientSession.events`: masked, then the host's one
intake with its dedupe, bounds and triage). Updates are coalesced per URI, so a server that
floods them costs one read per URI in flight, and no task per notification. The payload
holds what the read returned: text cut to fit ``PAYLOAD_BYTES``, binary parts as a note of
their type and size. ``notifications/resources/list_changed`` matches the globs afresh.

2026-07-28 replaced ``resources/subscribe`` by ``subscriptions/listen`` streams: there the
URIs matched are handed to the session's listen stream (:mod:`bothost.mcp.listen`), which
asks for their updates in its filter and is opened again whenever they change; the
updates then arrive, and are read and queued, as above.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import logging
import time
from typing import Any, Protocol

from bothost.mcp import jsonrpc, listing, revision
from bothost.mcp.flood import Tally
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.tasks import TaskSet

logger = logging.getLogger(__name__)

EVENT_TYPE = "event/resource_updated"
MAX_SUBSCRIPTIONS = 100  # per server; a glob that matches more is a config that matches too much
MAX_URI = 2048  # characters of a URI a notification may name; longer ones are dropped
# Under the event queue's payload cap (bothost.events.queue.MAX_PAYLOAD_BYTES, 256 KiB) with
# room for the other fields: a payload over the cap would be refused whole.
PAYLOAD_BYTES = 200 * 1024
MAX_PARTS = 50  # contents of one read looked at (a directory-like resource may return many)
RELIST_SETTLE = 1.0  # list_changed bursts within this long become one matching of the globs
GLOB_CHARS = "*?["


class Session(Protocol):
    """What subscriptions ask of a :class:`~bothost.mcp.session.ClientSession`."""

    capabilities: dict[str, Any]
    protocol_version: str | None

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float = ...
    ) -> dict[str, Any]: ...

    async def events(self, items: list[tuple[str, dict[str, Any]]]) -> None: ...

    def listen_to(self, uris: list[str]) -> bool: ...


def is_glob(pattern: str) -> bool:
    return any(c in pattern for c in GLOB_CHARS)


class Timed:
    """A session's requests with the server's timeout (what :mod:`listing` calls)."""

    def __init__(self, session: Session, timeout: float) -> None:
        self.session, self.timeout = session, timeout

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.session.request(method, params, timeout=self.timeout)


class Subscriptions:
    """One server's subscriptions, across its sessions (see module docstring)."""

    def __init__(self, server: str, patterns: list[str], *, log: logging.Logger, timeout: float):
        self.server = server
        self.patterns = [p for p in dict.fromkeys(patterns) if p.strip()]
        self.log = log
        self.timeout = timeout
        self.subscribed: dict[str, str] = {}  # uri -> its title ("" when not listed)
        self._session: Session | None = None
        self._pending: dict[str, None] = {}  # URIs updated and not read yet, in order
        self._tasks = TaskSet(log, "resource subscriptions")
        self._worker: asyncio.Future[Any] | None = None
        self._matching: asyncio.Future[Any] | None = None
        self._match_again = False
        self._said: set[str] = set()  # the once-per-server warnings already given
        self.ignored = Tally(log, time.monotonic, logging.INFO, "resource updates ignored")

    # -- lifecycle (the runner's) --------------------------------------------------------

    async def start(self, session: Session) -> None:
        """Subscribe on `session` (a new one, or one renewed): raises nothing but
        cancellation; what fails is said in the server's log."""
        self._session, self.subscribed = None, {}  # notices count once this session is taken
        resources = session.capabilities.get("resources")
        if not (isinstance(resources, dict) and resources.get("subscribe")):
            self._say_once(
                "unsupported",
                "does not support resource subscriptions (its capabilities have no "
                f"resources.subscribe); mcp.servers.{self.server}.subscribe is not used",
            )
            return
        self._session = session
        await self._match(session)

    async def stop(self) -> None:
        """The session ended: forget it and what was subscribed on it."""
        self._session, self.subscribed, self._pending = None, {}, {}
        for task in self._tasks:
            task.cancel()
        await self._tasks.wait()

    def _say_once(self, key: str, what: str) -> None:
        if key not in self._said:
            self._said.add(key)
            self.log.warning("%s", what)
            logger.warning("MCP server %s %s", self.server, what)

    # -- subscribing ---------------------------------------------------------------------

    async def _match(self, session: Session) -> None:
        """Subscribe what the patterns name now; unsubscribe what a glob no longer lists."""
        titles: dict[str, str] = {}
        try:
            found = await listing.list_all(
                Timed(session, self.timeout), "resources/list", "resources"
            )
        except McpError as exc:
            if exc.code == jsonrpc.CONNECTION_CLOSED:
                return
            self.log.warning("resources/list failed (%s): no glob is matched", exc.message)
            found = listing.Listing()
        for item in found.items:
            uri = item.get("uri")
            if isinstance(uri, str):
                titles[uri] = str(item.get("title") or item.get("name") or "")
        wanted = self._wanted(titles)
        if revision.stateless(session.protocol_version):  # one listen stream names them all
            if wanted != list(self.subscribed) and session.listen_to(wanted):
                self.subscribed = {uri: titles.get(uri, "") for uri in wanted}
                self.log.info("listening for updates of %d resources", len(wanted))
            return
        for uri in [u for u in self.subscribed if u not in wanted]:
            del self.subscribed[uri]  # a glob's resource the server no longer lists
            await self._send(session, "resources/unsubscribe", uri)
        fresh = [u for u in wanted if u not in self.subscribed]
        for uri in fresh:
            # taken before asking: an update may come before the answer does
            self.subscribed[uri] = titles.get(uri, "")
            if not await self._send(session, "resources/subscribe", uri):
                self.subscribed.pop(uri, None)
        if fresh:
            self.log.info("subscribed to %d resources", len(self.subscribed))

    def _wanted(self, titles: dict[str, str]) -> list[str]:
        wanted = [p for p in self.patterns if not is_glob(p)]
        for pattern in filter(is_glob, self.patterns):
            wanted += [uri for uri in titles if fnmatch.fnmatchcase(uri, pattern)]
        wanted = list(dict.fromkeys(wanted))
        if len(wanted) > MAX_SUBSCRIPTIONS:
            self._say_once(
                "too_many",
                f"mcp.servers.{self.server}.subscribe names {len(wanted)} resources; "
                f"the first {MAX_SUBSCRIPTIONS} are subscribed",
            )
        return wanted[:MAX_SUBSCRIPTIONS]

    async def _send(self, session: Session, method: str, uri: str) -> bool:
        try:
            await session.request(method, {"uri": uri}, timeout=self.timeout)
        except McpError as exc:
            if exc.code != jsonrpc.CONNECTION_CLOSED:
                self.log.warning("%s %s failed: %s", method, uri, exc.message)
            return False
        return True

    # -- what the server says ------------------------------------------------------------

    def notice(self, method: str, params: dict[str, Any]) -> None:
        """A resource notification from the session (sync: it costs a dict entry at most)."""
        if self._session is None or not self.patterns:
            return
        if method == "notifications/resources/list_changed":
            if any(map(is_glob, self.patterns)):
                self._rematch()
            return
        uri = params.get("uri")
        if not isinstance(uri, str) or len(uri) > MAX_URI or not self._covers(uri):
            self.ignored.add(f"{method} for a resource not subscribed")
            return
        self._pending[uri] = None  # an update already waiting covers this one too
        if self._worker is None or self._worker.done():
            self._worker = self._tasks.spawn(self._work(self._session))

    def _covers(self, uri: str) -> bool:
        # the spec lets an update name a sub-resource of the one subscribed
        return uri in self.subscribed or any(uri.startswith(s) for s in self.subscribed)

    def _rematch(self) -> None:
        if self._matching is not None and not self._matching.done():
            self._match_again = True
            return
        self._matching = self._tasks.spawn(self._rematch_loop())

    async def _rematch_loop(self) -> None:
        self._match_again = True
        while self._match_again and self._session is not None:
            self._match_again = False
            await asyncio.sleep(RELIST_SETTLE)
            if self._session is not None:
                await self._match(self._session)

    async def _work(self, session: Session) -> None:
        while self._pending and self._session is session:
            uri = next(iter(self._pending))
            del self._pending[uri]
            title = self.subscribed.get(uri, "")
            try:
                answer = await session.request("resources/read", {"uri": uri}, timeout=self.timeout)
            except McpError as exc:
                if exc.code == jsonrpc.CONNECTION_CLOSED:
                    return
                self.log.warning("reading updated resource %s failed: %s", uri, exc.message)
                found = {"uri": uri, "title": title, "summary": updated(uri, title)}
                found["error"] = f"reading it failed: {exc.message}"[:500]
            else:
                found = payload(uri, title, answer)
            try:
                await session.events([(EVENT_TYPE, found)])
            except Exception:  # boundary: one update's intake must not end the worker
                self.log.exception("queuing the update of %s failed", uri)


def updated(uri: str, title: str) -> str:
    return f"Updated: {title or uri}"


def payload(uri: str, title: str, answer: dict[str, Any]) -> dict[str, Any]:
    """The event of one update: what ``resources/read`` returned, within ``PAYLOAD_BYTES``."""
    parts = answer.get("contents")
    parts = [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    texts: list[str] = []
    binary: list[dict[str, Any]] = []
    for part in parts[:MAX_PARTS]:
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part.get("blob"), str):
            blob = part["blob"]
            binary.append(
                {
                    "uri": str(part.get("uri") or uri),
                    "mimeType": str(part.get("mimeType") or "application/octet-stream"),
                    "bytes": len(blob) * 3 // 4 - blob[-2:].count("="),  # base64's length
                }
            )
    found: dict[str, Any] = {"uri": uri, "title": title, "summary": updated(uri, title)}
    mime = next((p.get("mimeType") for p in parts if isinstance(p.get("mimeType"), str)), None)
    if mime:
        found["mimeType"] = mime
    if binary:
        found["binary"] = binary  # the bytes are not kept: a briefing says what changed
    if len(parts) > MAX_PARTS:
        found["parts_not_shown"] = len(parts) - MAX_PARTS
    text = "\n\n".join(texts)
    room = PAYLOAD_BYTES - size(found) - 64  # the keys "text" and "cut", and their numbers
    kept = fit(text, room)
    found["text"] = kept
    if len(kept) < len(text):
        found["cut"] = len(text) - len(kept)  # characters dropped from the end
    return found


def size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode())


def fit(text: str, room: int) -> str:
    """The longest head of `text` whose JSON takes at most `room` bytes (found by halving:
    escapes and multi-byte characters make the size of a cut unknown before it is made)."""
    if size(text) <= room:
        return text
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if size(text[:middle]) <= room:
            low = middle
        else:
            high = middle - 1
    return text[:low]
