"""The bundled ssh MCP server: files, commands and services on hosts named by alias.

Run it as `bothost-mcp-ssh` or `python -m bothost.mcp_servers.ssh`. The modules below the
tool layer (`aliases`, `connections`, `commands`, `files`, `edits`, `transfer`, `system`,
`monitor`) are plain blocking paramiko code; `service` runs them in threads with deadlines
and asks the user for passwords; `tools_*` declare the MCP tools; `server` builds it all.
See docs/servers/ssh.md.
"""
