"""Connecting the host to its subsystems: the event queue and tick, and the MCP manager.

Kept apart from :mod:`bothost.host` so the host reads as the flow of a message, and each
subsystem's construction (which needs several parts of the host) lives in one place.
"""

from __future__ import annotations

from typing import Any

from bothost.agent.mcp_tools import McpToolSource
from bothost.events.queue import EventQueue
from bothost.events.tick import Ticker
from bothost.mcp.manager import McpManager

ONE_SHOT_WAIT = 5.0  # long enough for a local server to start, short enough for a command


async def start_events(host: Any, tick: bool = True) -> Any:
    queue = EventQueue(host.store, host.config.tick)
    if tick and host.config.tick.enabled:
        host.ticker = Ticker.for_host(host)
        queue.on_urgent = host.ticker.poke
        host.supervise("tick", host.ticker.run_forever)
    return queue


async def start_mcp(host: Any, wait: bool = False) -> Any:
    """Start the MCP servers in the background (issue 14: one stuck server held the HTTP
    listener 15 s on every start). With `wait` — a one-shot host such as ``bothost chat``
    — give them ``ONE_SHOT_WAIT`` to be ready; whatever is not is simply not listed yet."""
    # Only the long-running host publishes state/mcp-status.json (what `bothost mcp list`
    # shows in other processes); a one-shot host's servers must not overwrite it (issue 13).
    manager = McpManager(host.config.mcp.servers, host.store, host.pm, host.home,
                         on_event=host.ingest_event, ask=nobody_to_ask, publish_status=not wait)
    await manager.start(wait=ONE_SHOT_WAIT if wait else 0.0)
    host.registry.add_source(McpToolSource(manager, host.config))
    return manager


async def nobody_to_ask(question: Any) -> None:
    """A server's question that belongs to no conversation's tool call has nobody to answer.

    Questions asked during a tool call go to that conversation's platform (the call brings
    its own asker); this default only makes the client offer elicitation to servers.
    """
    return None
