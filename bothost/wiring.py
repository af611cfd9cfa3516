"""Connecting the host to its subsystems: the event queue and tick, and the MCP manager.

Kept apart from :mod:`bothost.host` so the host reads as the flow of a message, and each
subsystem's construction (which needs several parts of the host) lives in one place.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import logging
from typing import Any

from bothost.executables import resolve_command

logger = logging.getLogger(__name__)


def available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


async def start_events(host: Any, tick: bool = True) -> Any:
    from bothost.events.queue import EventQueue

    queue = EventQueue(host.store, host.config.tick)
    if tick and host.config.tick.enabled and available("bothost.events.tick"):
        from bothost.events.tick import Ticker

        host.ticker = Ticker.for_host(host) if hasattr(Ticker, "for_host") else None
        if host.ticker is not None:
            queue.on_urgent = host.ticker.poke
            host.supervise("tick", host.ticker.run_forever)
    return queue


async def start_mcp(host: Any) -> Any:
    if not available("bothost.mcp.manager"):
        return None
    from bothost.agent.mcp_tools import McpToolSource
    from bothost.mcp.manager import McpManager

    servers = {name: with_resolved_command(server)
               for name, server in host.config.mcp.servers.items()}
    manager = McpManager(servers, host.store, host.pm, host.home, on_event=host.ingest_event,
                         ask=nobody_to_ask)
    await manager.start()
    host.registry.add_source(McpToolSource(manager, host.config))
    return manager


async def nobody_to_ask(question: Any) -> None:
    """A server's question that belongs to no conversation's tool call has nobody to answer.

    Questions asked during a tool call go to that conversation's platform (the call brings
    its own asker); this default only makes the client offer elicitation to servers.
    """
    return None


def with_resolved_command(server: Any) -> Any:
    """The bundled servers' scripts sit beside the interpreter, maybe not on PATH."""
    if server.command:
        found = resolve_command(server.command)
        if found:
            return dataclasses.replace(server, command=found)
    return server
