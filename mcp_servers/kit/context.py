"""What a running tool call can do besides returning: ask the user, report progress, log.

A `Context` is bound to one `tools/call` request of one client session. Its messages go
to the same place the call's response will go (stdout for stdio; the request's SSE stream
over HTTP), which is what lets a Streamable HTTP client tie an elicitation to its call.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .modern import Peer
    from .rounds import Asking
    from .server import Server
    from .session import Session, Sink

logger = logging.getLogger(__name__)

DEFAULT_ELICIT_TIMEOUT = 120.0


class Context:
    """Per-call handle passed to a tool that declares a `ctx` parameter."""

    def __init__(
        self,
        session: Session,
        request_id: Any,
        progress_token: str | int | None,
        sink: Sink,
        peer: Peer | None = None,
        asking: Asking | None = None,
    ) -> None:
        self.session = session
        self.request_id = request_id
        self.progress_token = progress_token
        self._sink = sink
        # who called: the request's own 2026-07-28 client, else the session's
        self.peer = peer or session.peer
        self.asking = asking  # a 2026-07-28 call's questions (.rounds)

    @property
    def server(self) -> Server:
        return self.session.server

    @property
    def can_elicit(self) -> bool:
        """Whether the client declared the elicitation capability (at initialize, or in
        the call's own ``_meta``)."""
        return self.peer.supports_elicitation and (not self.peer.stateless or bool(self.asking))

    async def elicit(
        self,
        message: str,
        requested_schema: dict[str, Any],
        timeout: float = DEFAULT_ELICIT_TIMEOUT,
    ) -> dict[str, Any] | None:
        """Ask the user for input through the client (`elicitation/create`).

        Returns the submitted `content` when the user accepts; None when they decline or
        cancel, when `timeout` seconds pass, or when the client cannot elicit at all.
        """
        if not self.can_elicit:
            return None
        params = {"message": message, "requestedSchema": requested_schema}
        try:
            if self.asking is not None:  # 2026-07-28: the question is the call's answer
                question = {"method": "elicitation/create", "params": params}
                result = await self.asking.ask(question, timeout)
            else:
                result = await self.session.request(
                    "elicitation/create", params, timeout=timeout, sink=self._sink
                )
        except TimeoutError:
            logger.warning("elicitation timed out after %.0f s", timeout)
            return None
        except (RequestFailedError, ConnectionError) as exc:
            logger.warning("client refused elicitation: %s", exc)
            return None
        if not isinstance(result, dict) or result.get("action") != "accept":
            return None
        content = result.get("content")
        return content if isinstance(content, dict) else {}

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send `notifications/progress` if the caller asked for progress, else nothing."""
        if self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.session.notify("notifications/progress", params, sink=self._sink)

    async def log(self, level: str, message: str, logger_name: str | None = None) -> None:
        """Send `notifications/message` at `level` (dropped below the client's chosen level)."""
        await self.session.log(
            level, message, logger_name=logger_name, sink=self._sink, peer=self.peer
        )


class RequestFailedError(Exception):
    """The client answered one of our requests with a JSON-RPC error."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.error = error
