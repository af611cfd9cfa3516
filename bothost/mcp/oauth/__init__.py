"""OAuth for remote MCP servers (the MCP authorization spec, 2025-11-25 and older).

:mod:`~bothost.mcp.oauth.discovery` finds the authorization server,
:mod:`~bothost.mcp.oauth.flow` makes the OAuth requests, :mod:`~bothost.mcp.oauth.auth`
is the Streamable HTTP transport's hook that uses them, :mod:`~bothost.mcp.oauth.tokens`
keeps what they obtain, and :mod:`~bothost.mcp.oauth.login` is where a person logs in.
"""
