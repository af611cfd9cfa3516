"""What the dashboard shows: MCP servers, the event queue, briefings, recent tool calls,
and today's model usage by person with the daily budgets.

Each poll (``GET /api/dashboard``) reads the queue counts, the latest tool calls, today's
usage (UTC) and MCP server status through ``host.queries`` and the latest web briefings
from the plugin's own table. Long fields are cut here so a poll stays small whatever a tool
returned.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from bothost.plugins.web import briefings

from bothost.agent.tools import readable
from bothost.api import HostApi
from bothost.queries import ToolCallRow

TOOL_CALLS = 25  # rows of the recent tool calls table
FIELD_CHARS = 300  # arguments/results are cut to this many characters for the table


def cut(text: Any, limit: int = FIELD_CHARS) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more)"


def tool_call(row: ToolCallRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "session": row.session,
        "tool": row.tool,
        "arguments": cut(row.arguments),
        "result": cut(readable(row.result or "")),
        "is_error": row.is_error,
        # "ok" says the call was allowed and ran; a tool that then failed is an error here
        "status": "error" if row.is_error and row.status == "ok" else row.status,
        "duration_ms": row.duration_ms,
        "started_at": row.started_at,
    }


async def snapshot(host: HostApi) -> dict[str, Any]:
    """Everything the dashboard shows, as JSON-able data."""
    queries = host.queries
    return {
        "queue": await queries.queue_counts(),
        "briefings": await host.store.run(briefings.recent),
        "tool_calls": [tool_call(row) for row in await queries.tool_calls(TOOL_CALLS)],
        "mcp": [dataclasses.asdict(server) for server in queries.mcp_servers()],
        "platforms": queries.platforms(),
        "usage": (await queries.usage_summary(by="user")).as_json(),  # today, UTC
        "now": time.time(),
    }
