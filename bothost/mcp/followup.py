"""Requests a 2026-07-28 server answers with "input required" (SEP-2322).

A stateless server cannot ask the client anything mid-request, so instead of the result it
answers ``resultType: "input_required"`` with the questions (``inputRequests``: keyed
``elicitation/create``, ``roots/list`` or ``sampling/createMessage`` requests) and,
optionally, an opaque ``requestState``. The client answers each question as it would answer
the same request from an older server — a form goes to the person behind the call, the
roots are ours, sampling is the host's (:mod:`bothost.mcp.sampling`) — and sends the
original request again under a new id with the answers (``inputResponses``) and the state
echoed byte for byte; a request without state gets none back. The answers and the state
belong to that one request: they are built from the request's own params, never kept on
the session, so no other request can carry them.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from bothost.mcp import elicitation, jsonrpc, sampling
from bothost.mcp.elicitation import Asker
from bothost.mcp.jsonrpc import McpError

if TYPE_CHECKING:
    from bothost.mcp.session import ClientSession

MAX_ROUNDS = 10  # the official SDKs' bound: a server asking for ever fails the request
# a round with state but no questions (the server is still working): a short wait, doubled
# per such round, so the follow-ups do not spin
STATE_ONLY_WAIT = 0.05
STATE_ONLY_MAX_WAIT = 0.25
FOLLOWUP_KEYS = ("inputResponses", "requestState")


async def next_params(
    session: ClientSession,
    params: dict[str, Any],
    answer: dict[str, Any],
    asker: Asker | None,
    round_: int,
) -> dict[str, Any]:
    """The params to send the request again with, answering `answer`'s questions."""
    base = {k: v for k, v in params.items() if k not in FOLLOWUP_KEYS}
    requests = answer.get("inputRequests")
    if isinstance(requests, dict) and requests:
        base["inputResponses"] = {
            key: await answered(session, request, asker) for key, request in requests.items()
        }
    else:
        await asyncio.sleep(min(STATE_ONLY_WAIT * 2**round_, STATE_ONLY_MAX_WAIT))
    state = answer.get("requestState")
    if isinstance(state, str):
        base["requestState"] = state
    return base


async def answered(session: ClientSession, request: Any, asker: Asker | None) -> dict[str, Any]:
    """The answer to one embedded question; raises McpError for one we cannot answer."""
    method = request.get("method") if isinstance(request, dict) else None
    params = request.get("params") if isinstance(request, dict) else None
    params = params if isinstance(params, dict) else {}
    if method == "elicitation/create":
        ask = asker.ask if asker is not None else session.ask
        tell = asker.tell if asker is not None else None
        return await elicitation.answer(params, ask, session.name, session.log, tell)
    if method == "sampling/createMessage":
        return await sampling.answer(params, session.sample, asker, session.name)
    if method == "roots/list":
        return {"roots": list(session.roots)}
    raise McpError(
        jsonrpc.METHOD_NOT_FOUND,
        f"the server asked for {str(method)[:80]!r}, which bothost does not answer",
    )
