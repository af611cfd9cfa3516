"""A session's tools: the server's list, read whole and within bounds, and calls to them.

:class:`Tools` is the part of :class:`~bothost.mcp.session.ClientSession` that lists a
server's tools (following ``nextCursor``; skipping a tool that is unusable, refusing a list
past the bounds below) and calls them, as a task where the server runs tool tasks
(:mod:`bothost.mcp.taskcall`), turning every failure into an error result the model reads.
Re-listing on ``list_changed`` is coalesced by the inbound side (:mod:`bothost.mcp.inbound`).
"""

from __future__ import annotations

import itertools
import json
import logging
from typing import TYPE_CHECKING, Any, cast

from bothost import hidden
from bothost.mcp import content, headers, inbound, jsonrpc, revision, taskcall
from bothost.mcp.deadline import DEFAULT_MAX_TIMEOUT
from bothost.mcp.elicitation import Ask, Asker
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.outgoing import REQUEST_TIMEOUT, Callback

if TYPE_CHECKING:
    from bothost.mcp.session import ClientSession

# Bounds on one server's tool list (issue 14: 50,000 tools, ~100 MB, were once accepted). A
# list over a bound is refused as a whole — the server is recorded failed with that error at
# start, or keeps its previous list on a re-list — rather than silently cut, so no tool goes
# missing unseen; a single tool that is too big or badly named is skipped with a warning.
MAX_TOOL_PAGES = 100  # a server that pages forever is refused past this many pages
MAX_TOOLS = 1_000  # more than any real server offers, and more than a model can choose from
MAX_TOOL_BYTES = 128 * 1024  # one tool's definition as JSON (its schema, mostly)
MAX_TOOLS_BYTES = 8 * 1024 * 1024  # all of a server's definitions: held and sent every round


class Tools:
    """Listing and calling tools (a part of ClientSession: see module docstring)."""

    name: str
    log: logging.Logger
    media_dir: Any  # Path | None: where a result's images and audio are kept
    inbound: inbound.Inbound
    capabilities: dict[str, Any]
    protocol_version: str | None
    tools: list[dict[str, Any]]
    tools_list_requests: int
    on_tools_changed: Callback | None
    _solo_askers: itertools.count

    if TYPE_CHECKING:  # the session's other parts (no stub may shadow them at run time)

        async def request(
            self,
            method: str,
            params: dict[str, Any] | None = None,
            *,
            timeout: float = REQUEST_TIMEOUT,
            max_timeout: float | None = None,
            on_progress: Callback | None = None,
            asker: Asker | None = None,
        ) -> dict[str, Any]: ...

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
                cast("ClientSession", self),  # the part runs the task as the whole session
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
