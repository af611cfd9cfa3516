"""The bundled gmail MCP server: mail tools and `event/new_email` from the History API."""
