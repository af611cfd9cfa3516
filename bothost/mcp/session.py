"""The client side of one MCP connection: handshake, requests, and their answers.

A :class:`ClientSession` sits on a transport (stdio or Streamable HTTP). It numbers its
requests, matches answers to them (string or numeric ids), bounds each with a deadline
(sending ``notifications/cancelled`` when one runs out; progress moves a call's deadline, a
question waiting for a person pauses it: :mod:`bothost.mcp.deadline`) and fails every
pending request at once when the transport closes. What the *server* sends unasked —
requests such as ``elicitation/create`` and notifications such as ``event/*`` — is handled
in :mod:`bothost.mcp.inbound`; turning tool results into text and media in
:mod:`bothost.mcp.content`.

The session owns its state (pending calls, the tool list, the server's info); the inbound
side reaches it only through the few methods of :class:`~bothost.mcp.inbound.InboundOwner`
(send, whose question is it, whose progress is it, move or pause a call's deadline,
re-list, hand over an event) and never writes it. A server's question is routed by the
:class:`~bothost.mcp.elicitation.Asker` each pending call carries (see
:meth:`ClientSession.asker_for`).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import itertools
import json
import logging
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bothost import hidden
from bothost.mcp import (
    client_tasks,
    content,
    followup,
    headers,
    inbound,
    jsonrpc,
    listen,
    revision,
    sampling,
    taskcall,
)
from bothost.mcp.deadline import DEFAULT_MAX_TIMEOUT, CallDeadline
from bothost.mcp.elicitation import Ask, Asker
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.transport import Transport, TransportError
from bothost.ratelog import RateLimitedLog

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
REQUEST_TIMEOUT = 60.0
# Bounds on one server's tool list (issue 14: 50,000 tools, ~100 MB, were once accepted). A
# list over a bound is refused as a whole — the server is recorded failed with that error at
# start, or keeps its previous list on a re-list — rather than silently cut, so no tool goes
# missing unseen; a single tool that is too big or badly named is skipped with a warning.
MAX_TOOL_PAGES = 100  # a server that pages forever is refused past this many pages
MAX_TOOLS = 1_000  # more than any real server offers, and more than a model can choose from
MAX_TOOL_BYTES = 128 * 1024  # one tool's definition as JSON (its schema, mostly)
MAX_TOOLS_BYTES = 8 * 1024 * 1024  # all of a server's definitions: held and sent every round
# Requests whose clock stops while a server's question waits for a person: the call, and
# the tasks/result request a task's questions arrive on.
HELD_WHILE_ASKING = ("tools/call", "tasks/result")

Callback = Callable[..., Any]


@dataclass
class Pending:
    """A request waiting for its answer."""

    method: str
    future: asyncio.Future
    on_progress: Callback | None = None
    asker: Asker | None = None  # who answers the server's questions during this call
    deadline: CallDeadline | None = field(default=None, repr=False)


class ClientSession:
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
        on_event: Callback | None = None,
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
        self.on_event = on_event
        # (source, [(type, payload), …]) for a backlog at once; preferred over on_event
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

    # -- outgoing ----------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float = REQUEST_TIMEOUT,
        max_timeout: float | None = None,
        on_progress: Callback | None = None,
        asker: Asker | None = None,
    ) -> dict[str, Any]:
        """Send a request and wait for its result; raises :class:`McpError`.

        ``timeout`` bounds the wait for news of the request; with ``max_timeout`` the
        request carries a progress token, and progress extends it up to that long (see
        :mod:`bothost.mcp.deadline`). An answer that asks for input first (2026-07-28) is
        answered and the request sent again (:mod:`bothost.mcp.followup`), each time with
        its own id and deadline.
        """
        params = dict(params or {})
        for round_ in range(followup.MAX_ROUNDS):
            answer = await self._request_once(
                method, params, timeout, max_timeout, on_progress, asker
            )
            if answer.get("resultType") != revision.INPUT_REQUIRED:
                return answer
            params = await followup.next_params(self, params, answer, asker, round_)
        raise McpError(
            jsonrpc.INTERNAL_ERROR,
            f"{method}: the server still asked for input after {followup.MAX_ROUNDS} rounds",
        )

    async def _request_once(
        self,
        method: str,
        params: dict[str, Any],
        timeout: float,
        max_timeout: float | None,
        on_progress: Callback | None,
        asker: Asker | None,
    ) -> dict[str, Any]:
        if self.closed_reason is not None:
            raise McpError(jsonrpc.CONNECTION_CLOSED, f"server {self.closed_reason}")
        id_ = next(self._ids)
        extra: dict[str, str] = {}
        if on_progress is not None or max_timeout is not None:
            params = {**params, "_meta": {**params.get("_meta", {}), "progressToken": id_}}
        if self.speaking is not None and revision.stateless(self.speaking):
            caps = self.client_capabilities(self.speaking)
            params = revision.stamped(params, self.speaking, self.client_info, caps, self.log_level)
            tool = self._listed(str(params.get("name"))) if method == "tools/call" else None
            extra = headers.for_request(method, params, tool)
        future = asyncio.get_running_loop().create_future()
        deadline = CallDeadline(timeout, max_timeout)
        self.pending[id_] = Pending(method, future, on_progress, asker, deadline)
        try:
            async with asyncio.timeout_at(deadline.when()) as scope:
                with deadline.attach(scope):
                    await self.transport.send(jsonrpc.request(id_, method, params), extra)
                    return await future
        except TimeoutError:
            why = (
                f"stopped at max_timeout: still running after {deadline.longest:g} s"
                if deadline.capped
                else f"timed out after {timeout:g} s"
            )
            self._cancel(id_, method, why)
            raise McpError(jsonrpc.REQUEST_TIMEOUT, f"{method} {why}") from None
        except TransportError as exc:
            raise McpError(jsonrpc.CONNECTION_CLOSED, str(exc)) from None
        except asyncio.CancelledError:
            self._cancel(id_, method, "the caller gave up")
            raise
        finally:
            self.pending.pop(id_, None)
            if future.done() and not future.cancelled():
                # a send that failed because the server is gone also failed this future
                # (_on_close wakes every pending call); nobody else will ever look at it
                future.exception()

    def _cancel(self, id_: Any, method: str, reason: str) -> None:
        self.transport.abandoned(id_)  # a late answer is dropped: nothing need bring it
        if method in ("initialize", "server/discover") or self.closed_reason is not None:
            return  # the spec forbids cancelling either
        note = jsonrpc.notification("notifications/cancelled", {"requestId": id_, "reason": reason})
        self.inbound.spawn(self._send_quietly(note))

    async def _send_quietly(self, message: jsonrpc.Message) -> None:
        try:
            await self.transport.send(message)
        except TransportError as exc:
            self.log.debug("could not send %s: %s", message.get("method"), exc)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self.transport.send(jsonrpc.notification(method, params))

    async def send(self, message: jsonrpc.Message) -> None:
        """Write one message (an answer to a server request); raises TransportError."""
        await self.transport.send(message)

    async def ping(self, timeout: float = 10.0) -> None:
        """A request answered at once (a barrier: what the server sent before is read);
        2026-07-28 has no ping, so there it is server/discover."""
        if revision.stateless(self.protocol_version):
            await self.request("server/discover", timeout=timeout)
        else:
            await self.request("ping", timeout=timeout)

    async def list_tools(self, timeout: float = REQUEST_TIMEOUT) -> list[dict[str, Any]]:
        """Every tool, following ``nextCursor``; raises :class:`McpError` past the bounds
        (``MAX_TOOL_PAGES``, ``MAX_TOOLS``, ``MAX_TOOLS_BYTES``). Tools without a usable
        name, repeated names, definitions over ``MAX_TOOL_BYTES`` and input schemas whose
        ``type`` is not ``"object"`` are skipped, logged."""
        tools: dict[str, dict[str, Any]] = {}
        skipped: list[str] = []
        total = 0
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_TOOL_PAGES):
            self.tools_list_requests += 1
            page = await self.request(
                "tools/list", {"cursor": cursor} if cursor else {}, timeout=timeout
            )
            listed = page.get("tools")
            for tool in listed if isinstance(listed, list) else []:
                total += self._take_tool(tool, tools, skipped, self.protocol_version)
                if len(tools) > MAX_TOOLS or total > MAX_TOOLS_BYTES:
                    raise McpError(
                        jsonrpc.INTERNAL_ERROR,
                        f"tools/list refused: more than "
                        f"{MAX_TOOLS} tools or {MAX_TOOLS_BYTES // 2**20} MB of "
                        "tool definitions",
                    )
            cursor = page.get("nextCursor")
            if not cursor or not isinstance(cursor, str):
                break
            if cursor in seen:
                self.log.warning("tools/list repeated cursor %.100r; stopping", cursor)
                break
            seen.add(cursor)
        else:
            raise McpError(
                jsonrpc.INTERNAL_ERROR,
                f"tools/list refused: still paging after {MAX_TOOL_PAGES} pages",
            )
        if skipped:
            self.log.warning(
                "tools/list: skipped %d tools: %s",
                len(skipped),
                "; ".join(skipped[:10]) + (" …" if len(skipped) > 10 else ""),
            )
        return list(tools.values())

    @staticmethod
    def _take_tool(
        tool: Any, tools: dict[str, dict[str, Any]], skipped: list[str], version: str | None
    ) -> int:
        """Add one listed tool to `tools` if usable (else say why in `skipped`); its size."""
        name = tool.get("name") if isinstance(tool, dict) else None
        if not isinstance(name, str) or not name.strip():
            skipped.append(f"name {name!r:.60} is not a non-empty string")
            return 0
        if name in tools:
            skipped.append(f"{name!r:.80} listed twice (the first kept)")
            return 0
        if unseen := sorted({ord(c) for c in name if hidden.is_hidden(c)}):
            # a bidi override or a zero-width character makes a name read as another one
            # (in `mcp list`, the web page, an approval): a display-spoofing vector, and no
            # honest tool name needs one
            codes = ", ".join(hidden.escaped(code, "json") for code in unseen[:5])
            skipped.append(f"{name!r:.80} has hidden or text-reordering characters ({codes})")
            return 0
        schema = tool.get("inputSchema")
        if isinstance(schema, dict) and schema.get("type", "object") != "object":
            # MCP's arguments are an object; and both providers refuse a whole request that
            # offers a function whose parameters are not an object schema
            kind = json.dumps(schema["type"], ensure_ascii=False)[:40].replace('"', "'")
            skipped.append(f"{name!r:.80} takes no JSON object (inputSchema type {kind})")
            return 0
        if revision.stateless(version) and (why := headers.refusal(schema)):
            # SEP-2243: the client must not use a tool whose header marks are malformed
            skipped.append(f"{name!r:.80}: {why}")
            return 0
        size = len(json.dumps(tool, ensure_ascii=False, default=str))
        if size > MAX_TOOL_BYTES:
            skipped.append(f"{name!r:.80} is {size} bytes (at most {MAX_TOOL_BYTES})")
            return 0
        tools[name] = tool
        return size

    async def refresh_tools(self) -> list[dict[str, Any]]:
        """Re-list tools; concurrent calls and list_changed bursts share one listing."""
        await self.inbound.refresh_tools()
        return self.tools

    async def relist(self) -> None:
        """List the tools now and keep them (the inbound side decides when); raises McpError."""
        self.tools = await self.list_tools()
        if self.on_tools_changed is not None:
            try:
                await inbound.await_maybe(self.on_tools_changed(self.tools))
            except Exception:  # boundary: the owner's listener
                self.log.exception("tools-changed listener failed")

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float = REQUEST_TIMEOUT,
        max_timeout: float = DEFAULT_MAX_TIMEOUT,
        on_progress: Callback | None = None,
        ask: Asker | Ask | None = None,
    ) -> content.CallResult:
        """Call a tool; failures (error answers, timeouts, a dead server) are error results.

        The call always carries a progress token: progress extends ``timeout`` up to
        ``max_timeout``, and the clock stops while a server's question waits for a person.

        ``ask`` answers the server's questions during the call: an :class:`Asker` (whose
        key says which conversation the call belongs to), or a bare callable, which counts
        as a conversation of its own.
        """
        if ask is not None and not isinstance(ask, Asker):
            ask = Asker(f"call:{next(self._solo_askers)}", ask)
        tool = self._listed(name)
        if tool is None and taskcall.server_runs_tool_tasks(self.capabilities):
            tool = await self._listed_again(name)
        if taskcall.runs_as_task(tool, self.capabilities):
            result = await taskcall.run(
                self,
                name,
                arguments or {},
                timeout=timeout,
                max_timeout=max_timeout,
                on_progress=on_progress,
                asker=ask,
            )
        else:
            result = await self._call_plain(name, arguments, timeout, max_timeout, on_progress, ask)
        # one check for both ways a call runs: the spec's outputSchema rule does not care
        return content.checked(result, tool, f"{self.name}/{name}")

    async def _call_plain(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        timeout: float,
        max_timeout: float,
        on_progress: Callback | None,
        ask: Asker | None,
    ) -> content.CallResult:
        try:
            answer = await self.request(
                "tools/call",
                {"name": name, "arguments": arguments or {}},
                timeout=timeout,
                max_timeout=max_timeout,
                on_progress=on_progress,
                asker=ask,
            )
        except McpError as exc:  # the message, without a TypeScript SDK's code prefix
            why = content.SDK_ERROR_PREFIX.sub("", exc.message)
            return content.CallResult.failure(f"{self.name}/{name} failed: {why}")
        return content.from_result(answer, self.media_dir)

    def _listed(self, name: str) -> dict[str, Any] | None:
        """The listed definition of tool `name`, if listed."""
        for tool in self.tools:
            if tool.get("name") == name:
                return tool
        return None

    async def _listed_again(self, name: str) -> dict[str, Any] | None:
        """The listed definition of tool `name`, which was not listed yet, looked up once
        more (a server may add tools right after initialize and announce them a moment
        later): only on a server that runs tool tasks, where it decides how the call is
        sent (elsewhere it changes nothing, and the call is made without the wait)."""
        try:
            await self.refresh_tools()
        except McpError as exc:
            self.log.info("listing tools before calling %s failed: %s", name, exc.message)
        return self._listed(name)

    # -- incoming ----------------------------------------------------------------------

    def _on_message(self, message: jsonrpc.Message, related: Any, size: int = 0) -> None:
        if "method" in message:  # a server's notification (events: the flood) or request
            if "id" in message:
                self.inbound.on_request(message, related)
            else:
                self.inbound.on_notification(message, size)
        elif "id" in message and ("result" in message or "error" in message):  # an answer
            pending = self.pending.get(message["id"]) or self._find(message["id"])
            if pending is None:
                self.complaints.log(
                    logging.DEBUG, "unknown", "answer to unknown request %r ignored", message["id"]
                )
            elif not pending.future.done():
                if "error" in message:
                    pending.future.set_exception(McpError.from_error(message["error"]))
                else:
                    answer = message.get("result")
                    pending.future.set_result(answer if isinstance(answer, dict) else {})

    # -- what the inbound side asks ------------------------------------------------------

    def asker_for(self, related: Any, task: str | None = None) -> Ask | None:
        """Who answers a server's question: the asker of the call it belongs to.

        A question that names its task (`task`) belongs to the call running that task.
        Over HTTP the server asks on the stream of the call that caused it (``related``).
        Over stdio nothing names the call, so while every call in flight that brought an
        asker belongs to one conversation (one key), the question is that conversation's;
        with calls of several conversations in flight it could be anyone's, and it goes to
        the session's default (usually nobody: the answer is ``cancel``).
        """
        asker = self.conversation_of(related, task)
        return asker.ask if asker is not None else self.ask

    def conversation_of(self, related: Any, task: str | None = None) -> Asker | None:
        """The :class:`Asker` of the conversation a server's request belongs to, found as
        :meth:`asker_for` finds it; None when no one conversation's call can be named."""
        owner = self._task_call(task)
        if owner is not None and owner.asker is not None:
            return owner.asker
        call = self._find(related) if inbound.hashable(related) else None
        if call is not None and call.asker is not None:
            return call.asker
        askers = {p.asker.key: p.asker for p in self.pending.values() if p.asker is not None}
        askers.update((c.asker.key, c.asker) for c in self.task_calls if c.asker is not None)
        if len(askers) == 1:
            return next(iter(askers.values()))
        return None

    def progress_for(self, token: Any) -> Callback | None:
        """The progress callback of the call in flight that `token` names, if any."""
        pending = self._find(token) if inbound.hashable(token) else None
        if pending is not None:
            return pending.on_progress
        owner = next((c for c in self.task_calls if c.token == token), None)
        return owner.on_progress if owner is not None else None

    def progressed(self, token: Any) -> None:
        """The call `token` names reported progress: its deadline moves."""
        pending = self._find(token) if inbound.hashable(token) else None
        if pending is not None and pending.deadline is not None:
            pending.deadline.progressed()
        for owner in self.task_calls:  # a task's token stays valid for the task's life
            if owner.token == token:
                owner.deadline.progressed()

    def task_status(self, params: dict[str, Any]) -> None:
        """A ``notifications/tasks/status``: the call running that task takes it."""
        owner = self._task_call(params.get("taskId"))
        if owner is not None:
            owner.update(params)

    @contextmanager
    def asking(self, related: Any, task: str | None = None) -> Iterator[None]:
        """While a server's question waits for a person, the calls it may belong to wait
        without a clock: the call running the task it names (and the tasks/result requests
        such questions arrive on), or the call `related` names (HTTP), else — nothing on the
        wire says which (stdio) — every tool call in flight."""
        owner = self._task_call(task)
        call = self._find(related) if inbound.hashable(related) else None
        if owner is not None:
            results = [p for p in self.pending.values() if p.method == "tasks/result"]
            calls, deadlines = [*results, *([call] if call else [])], [owner.deadline]
        elif call is not None:
            calls, deadlines = [call], []
        else:
            calls = list(self.pending.values())
            deadlines = [c.deadline for c in self.task_calls]
        deadlines += [
            p.deadline for p in calls if p.deadline is not None and p.method in HELD_WHILE_ASKING
        ]
        with ExitStack() as stack:
            for deadline in dict.fromkeys(deadlines):
                stack.enter_context(deadline.hold())
            yield

    def _task_call(self, task_id: Any) -> taskcall.TaskCall | None:
        if not isinstance(task_id, str):
            return None
        return next((c for c in self.task_calls if c.task_id == task_id), None)

    def listen_to(self, uris: list[str]) -> bool:
        """Ask for the updates of `uris` on the listen stream (2026-07-28); False when this
        session keeps none (a one-shot command's, or an older revision's)."""
        if self.listening is None or not revision.stateless(self.protocol_version):
            return False
        self.listening.open(uris)
        return True

    def listen_notice(self, method: str, params: dict[str, Any]) -> None:
        """A listen stream's acknowledgement (bothost.mcp.listen)."""
        if self.listening is not None:
            self.listening.take(method, params)

    def resources_notice(self, method: str, params: dict[str, Any]) -> None:
        """A resource notification: the owner's subscriptions act on it (sync, cheap)."""
        if self.on_resources is not None:
            try:
                self.on_resources(method, params)
            except Exception:  # boundary: the owner's listener
                self.log.exception("resource notification listener failed")

    async def events(self, items: list[tuple[str, dict[str, Any]]]) -> None:
        """Hand ``event/*`` notifications, in the order sent, to the owner: all at once to
        ``on_events``, else one after another to ``on_event``."""
        if self.on_events is not None:
            await inbound.await_maybe(self.on_events(self.name, items))
        elif self.on_event is not None:
            for method, params in items:
                await inbound.await_maybe(self.on_event(self.name, method, params))

    def _find(self, id_: Any) -> Pending | None:
        pending = self.pending.get(id_)
        if pending is None and isinstance(id_, str) and id_.lstrip("-").isdigit():
            pending = self.pending.get(int(id_))  # tolerate a server that stringifies our ids
        return pending
