"""The bundled gcal MCP server: calendar tools and change events from incremental sync."""
