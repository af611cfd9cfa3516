"""The MCP client and the manager that keeps MCP servers running as the host's plugins.

Layers, bottom up: :mod:`~bothost.mcp.jsonrpc` (message shapes), the transports
(:mod:`~bothost.mcp.stdio`, :mod:`~bothost.mcp.http`), :mod:`~bothost.mcp.session` (one
initialized connection, with :mod:`~bothost.mcp.inbound` for what servers send unasked and
:mod:`~bothost.mcp.content` for tool results), and :mod:`~bothost.mcp.manager` (every
configured server: start, restart, stop, status).
"""

from bothost.mcp.content import CallResult
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.session import PROTOCOL_VERSION, ClientSession

__all__ = ["CallResult", "ClientSession", "McpError", "PROTOCOL_VERSION"]
