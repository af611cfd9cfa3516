"""What the dashboard shows: MCP servers, the event queue, briefings, recent tool calls.

One read of the store per poll (``GET /api/dashboard``) gathers the queue counts, the
latest web briefings and the latest tool calls; MCP server status comes from the running
manager. Long fields are cut here so a poll stays small whatever a tool returned.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import sqlite_utils
from bothost.plugins.web import briefings

TOOL_CALLS = 25  # rows of the recent tool calls table
FIELD_CHARS = 300  # arguments/results are cut to this many characters for the table
EVENT_STATUSES = ("pending", "claimed", "snoozed", "done", "failed")


def cut(text: Any, limit: int = FIELD_CHARS) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more)"


def mcp_servers(host: Any) -> list[dict[str, Any]]:
    """The MCP manager's view of each server, as plain data (empty without a manager)."""
    if host.mcp is None or not hasattr(host.mcp, "status"):
        return []
    out = []
    for status in host.mcp.status():
        data = dataclasses.asdict(status) if dataclasses.is_dataclass(status) else (
            dict(status) if isinstance(status, dict) else vars(status))
        tools = data.get("tools")
        if isinstance(tools, list | tuple):
            data["tools"] = [t if isinstance(t, str) else getattr(t, "name", str(t))
                             for t in tools]
        row = {k: v for k, v in data.items()
               if isinstance(v, str | int | float | bool | list | type(None))}
        row["tool_names"] = tool_names(host.mcp, row.get("name", ""))
        out.append(row)
    return out


def tool_names(manager: Any, server: str) -> list[str]:
    """The names of a server's tools, as the manager lists them (empty when unknown)."""
    try:
        tools = manager.tools(server) if hasattr(manager, "tools") else []
    except Exception:  # the dashboard shows what it can
        return []
    return sorted(str(t.get("name", "")) for t in tools if isinstance(t, dict))


def queue_counts(db: sqlite_utils.Database) -> dict[str, int]:
    counts = dict.fromkeys(EVENT_STATUSES, 0)
    for status, n in db.conn.execute("SELECT status, COUNT(*) FROM events GROUP BY status"):
        counts[status] = n
    return counts


def tool_calls(db: sqlite_utils.Database, limit: int = TOOL_CALLS) -> list[dict[str, Any]]:
    rows = db.conn.execute(
        "SELECT id, session_id, tool, arguments, result, is_error, status, duration_ms,"
        " started_at FROM tool_calls ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
    return [{"id": r[0], "session": r[1], "tool": r[2], "arguments": cut(r[3]),
             "result": cut(r[4]), "is_error": bool(r[5]), "status": r[6],
             "duration_ms": r[7], "started_at": r[8]} for r in rows]


def read(db: sqlite_utils.Database) -> dict[str, Any]:
    return {"queue": queue_counts(db), "briefings": briefings.recent(db),
            "tool_calls": tool_calls(db)}


async def snapshot(host: Any) -> dict[str, Any]:
    """Everything the dashboard shows, as JSON-able data."""
    data = await host.store.run(read)
    data["mcp"] = mcp_servers(host)
    data["platforms"] = sorted(host.active)
    data["now"] = time.time()
    return data
