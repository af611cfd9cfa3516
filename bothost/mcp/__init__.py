"""The MCP client and the manager that keeps MCP servers running as the host's plugins.

Layers, bottom up: :mod:`~bothost.mcp.jsonrpc` (message shapes), the transports
(:mod:`~bothost.mcp.stdio`, :mod:`~bothost.mcp.http`), :mod:`~bothost.mcp.session` (one
initialized connection, with :mod:`~bothost.mcp.inbound` for what servers send unasked and
:mod:`~bothost.mcp.content` for tool results), and :mod:`~bothost.mcp.manager` (every
configured server: start, restart, stop, status).

The names below are imported on first use, not with the package: a module that needs one
small part (the config's loader reads :mod:`~bothost.mcp.roots`) would otherwise load the
whole client, importlib.metadata with it (issue 19: `bothost config show` and every command
that reads the config paid for it).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bothost.mcp.content import CallResult
    from bothost.mcp.jsonrpc import McpError
    from bothost.mcp.session import PROTOCOL_VERSION, ClientSession

__all__ = ["CallResult", "ClientSession", "McpError", "PROTOCOL_VERSION"]
_HOMES = {
    "CallResult": "bothost.mcp.content",
    "ClientSession": "bothost.mcp.session",
    "McpError": "bothost.mcp.jsonrpc",
    "PROTOCOL_VERSION": "bothost.mcp.session",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
