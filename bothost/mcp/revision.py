"""Which MCP revision a connection speaks, and what that asks of every request.

bothost speaks 2026-07-28 first and 2025-11-25 (and older) as fallback. The two differ in
lifecycle, not in their tools: through 2025-11-25 a connection begins with ``initialize``
and the server's answer holds for the session; 2026-07-28 has no handshake and no session —
every request carries the revision, the client's name and its capabilities in
``params._meta`` (and, over HTTP, the revision in ``MCP-Protocol-Version`` too), and
``server/discover`` says what a server supports whenever asked.

Negotiation (:func:`negotiate`) follows the official SDK's ``auto`` policy: ask
``server/discover`` at the newest revision; a ``-32022`` naming revisions we also speak
is asked once more at the newest of them; an answer whose ``supportedVersions`` holds one
of ours is adopted. Anything else that is an answer — method not found, a refused request,
an HTTP 400 from a server that wants a session first, no answer within the probe's bound
(:data:`STDIO_DISCOVER_TIMEOUT` for a local process, :data:`DISCOVER_TIMEOUT` over HTTP) —
means an older server, and ``initialize`` follows. Only a
``-32022`` that names none of our revisions at all is final. A connection that fails
outright (the server exited, nobody listens) fails the start as before. A server's
``protocol`` setting may pin either revision instead (no probe, or no fallback).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from bothost.mcp import jsonrpc
from bothost.mcp.jsonrpc import McpError

if TYPE_CHECKING:
    from bothost.mcp.session import ClientSession

STATELESS = ("2026-07-28",)  # newest last: revisions negotiated by server/discover
HANDSHAKE = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # by initialize
LATEST = STATELESS[-1]
UNSUPPORTED_VERSION = -32022  # data.supported names what the server speaks
HEADER_MISMATCH = -32020  # the version header is missing or disagrees with _meta
# what stands in a 2026-07-28 request's _meta
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"  # what logging/setLevel was; absent: none
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"  # in a result's _meta
# A server that neither answers nor refuses an unknown method is given this long before
# initialize is tried: an older server that ignores what it does not know costs one wait.
# Over HTTP the official SDK's 10 s. A local process answers its first message once it
# has started — every server measured within 1.2 s, most refusing an unknown method
# (docs/mcp.md, "The 2026-07-28 probe") — so there 3 s; a 2026-07-28 server slower than
# that refuses the initialize that follows with -32022, and is asked again (below).
DISCOVER_TIMEOUT = 10.0
STDIO_DISCOVER_TIMEOUT = 3.0
# results a 2026-07-28 server marks with resultType; absent means complete (SEP-2322)
COMPLETE, INPUT_REQUIRED = "complete", "input_required"


def stateless(version: str | None) -> bool:
    return version in STATELESS


def stamped(
    params: dict[str, Any],
    version: str,
    client_info: dict,
    capabilities: dict,
    log_level: str | None = None,
) -> dict[str, Any]:
    """`params` with the per-request ``_meta`` a stateless revision asks for (what the
    caller put in ``_meta`` kept: a progress token, say); `log_level` asks for the
    request's log messages at that level and above (config ``log_level``)."""
    meta = {
        VERSION_KEY: version,
        CLIENT_INFO_KEY: client_info,
        CAPABILITIES_KEY: capabilities,
        **({LOG_LEVEL_KEY: log_level} if log_level else {}),
        **(params.get("_meta") or {}),
    }
    return {**params, "_meta": meta}


def supported(data: Any) -> list[str] | None:
    """What a -32022 error's ``data.supported`` lists, or None when it lists nothing usable."""
    listed = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(listed, list):
        return None
    return [v for v in listed if isinstance(v, str)]


def best_stateless(versions: list[str] | None) -> str | None:
    """The newest stateless revision both sides speak, if any."""
    mutual = [v for v in STATELESS if v in (versions or ())]
    return mutual[-1] if mutual else None


def discovered(result: dict[str, Any]) -> dict[str, Any]:
    """A ``server/discover`` answer as the session keeps it: server info (from the result's
    ``_meta``, where 2026-07-28 puts it; some servers still put it beside), capabilities and
    instructions."""
    meta = result.get("_meta")
    meta = meta if isinstance(meta, dict) else {}
    info = meta.get(SERVER_INFO_KEY) or result.get("serverInfo")
    capabilities = result.get("capabilities")
    return {
        "serverInfo": info if isinstance(info, dict) else {},
        "capabilities": capabilities if isinstance(capabilities, dict) else {},
        "instructions": result.get("instructions"),
    }


async def negotiate(session: ClientSession, timeout: float) -> None:
    """Settle the revision `session` speaks, within `timeout` (see module docstring);
    raises McpError when the server speaks none of ours or the connection fails."""
    deadline = asyncio.get_running_loop().time() + timeout

    def left() -> float:
        return max(deadline - asyncio.get_running_loop().time(), 0.001)

    if session.protocol in HANDSHAKE:  # pinned to the handshake: no probe
        await session.initialize(left())
        return
    if session.protocol in STATELESS:  # pinned: discover, and no fallback
        result = await session.discover(session.protocol, timeout=left())
        if session.protocol not in (result.get("supportedVersions") or ()):
            raise unspoken([v for v in result.get("supportedVersions") or () if isinstance(v, str)])
        session.adopt(result, session.protocol)
        return
    version = LATEST
    from bothost.mcp.stdio import StdioTransport  # here: a command's host imports this early

    local = isinstance(session.transport, StdioTransport)
    bound = STDIO_DISCOVER_TIMEOUT if local else DISCOVER_TIMEOUT
    for attempt in range(2):
        try:
            result = await session.discover(version, timeout=min(bound, left()))
        except McpError as exc:
            if session.closed:
                raise
            offered = supported(exc.data) if exc.code == UNSUPPORTED_VERSION else None
            if (newer := best_stateless(offered)) and attempt == 0:
                version = newer
                continue
            if offered is not None and not any(v in HANDSHAKE for v in offered):
                raise unspoken(offered) from None
            break
        if newer := best_stateless(result.get("supportedVersions")):
            session.adopt(result, newer)
            return
        break  # a server that answers discover but lists only handshake revisions
    try:
        await session.initialize(left())
    except McpError as exc:
        # a probe that timed out here but reached a slow server made it answer in 2026-07-28,
        # which refuses initialize naming its revisions: ask discover again at one of them
        newer = best_stateless(supported(exc.data)) if exc.code == UNSUPPORTED_VERSION else None
        if newer is None:
            raise
        result = await session.discover(newer, timeout=left())
        if best_stateless(result.get("supportedVersions")) is None:
            raise
        session.adopt(result, newer)


def unspoken(offered: list[str]) -> McpError:
    ours = ", ".join((*STATELESS, *HANDSHAKE))
    theirs = ", ".join(v[:20] for v in offered[:8]) or "none"
    return McpError(
        jsonrpc.INVALID_REQUEST,
        f"the server speaks protocol revisions {theirs}; bothost speaks {ours}",
    )
