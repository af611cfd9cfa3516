"""A session's requests to its server: numbered, bounded, and matched to their answers.

:class:`Outgoing` is the part of :class:`~bothost.mcp.session.ClientSession` that sends. It
numbers requests, bounds each with a deadline (sending ``notifications/cancelled`` when
one runs out; progress moves a call's deadline, a question waiting for a person pauses
it: :mod:`bothost.mcp.deadline`), stamps a 2026-07-28 request's ``_meta`` and headers, and
matches answers to the requests waiting for them (string or numeric ids). An answer that
asks for input first (2026-07-28) is answered and the request sent again
(:mod:`bothost.mcp.followup`). The session's other parts reach the pending requests only
through :attr:`pending` and :meth:`_find`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from bothost.logs.rate import RateLimitedLog
from bothost.mcp import followup, headers, inbound, jsonrpc, revision
from bothost.mcp.deadline import CallDeadline
from bothost.mcp.elicitation import Asker
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.transport import Transport, TransportError

if TYPE_CHECKING:
    from bothost.mcp.session import ClientSession

REQUEST_TIMEOUT = 60.0

Callback = Callable[..., Any]


@dataclass
class Pending:
    """A request waiting for its answer."""

    method: str
    future: asyncio.Future
    on_progress: Callback | None = None
    asker: Asker | None = None  # who answers the server's questions during this call
    deadline: CallDeadline | None = field(default=None, repr=False)


class Outgoing:
    """Requests and their answers (a part of ClientSession: see module docstring)."""

    transport: Transport
    log: logging.Logger
    complaints: RateLimitedLog
    inbound: inbound.Inbound
    client_info: dict[str, str]
    closed_reason: str | None
    protocol_version: str | None
    speaking: str | None
    log_level: str | None
    pending: dict[Any, Pending]
    _ids: Any  # itertools.count: the next request's id

    if TYPE_CHECKING:  # the session's other parts (no stub may shadow them at run time)

        def client_capabilities(self, version: str | None = None) -> dict[str, Any]: ...

        def _listed(self, name: str) -> dict[str, Any] | None: ...

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
            session = cast("ClientSession", self)  # the part answers as the whole session
            params = await followup.next_params(session, params, answer, asker, round_)
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

    def _answered(self, message: jsonrpc.Message) -> None:
        """An answer from the server: the request waiting for it wakes."""
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

    def _find(self, id_: Any) -> Pending | None:
        pending = self.pending.get(id_)
        if pending is None and isinstance(id_, str) and id_.lstrip("-").isdigit():
            pending = self.pending.get(int(id_))  # tolerate a server that stringifies our ids
        return pending
