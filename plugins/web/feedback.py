"""``POST /api/feedback``: the [Ack] and [Snooze] buttons on the dashboard's briefings.

Both are the host's idempotent feedback functions (``host.queries``), so a
double click or two open pages leave the same state: acknowledge marks the item's events
done, snooze hides them until the given number of minutes has passed.
"""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from bothost.api import HostApi

MAX_IDS = 1000  # one briefing item never groups more events than a tick shows
MAX_SNOOZE_MINUTES = 7 * 24 * 60
DEFAULT_SNOOZE_MINUTES = 60


def problem(body: dict[str, Any]) -> str | None:
    ids = body.get("event_ids")
    if body.get("action") not in ("ack", "snooze"):
        return "action must be ack or snooze"
    if (
        not isinstance(ids, list)
        or not ids
        or len(ids) > MAX_IDS
        or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids)
    ):
        return f"event_ids must be a list of 1-{MAX_IDS} integers"
    minutes = body.get("minutes", DEFAULT_SNOOZE_MINUTES)
    if (
        not isinstance(minutes, int | float)
        or isinstance(minutes, bool)
        or not 0 < minutes <= MAX_SNOOZE_MINUTES
    ):
        return f"minutes must be a number between 0 and {MAX_SNOOZE_MINUTES}"
    return None


async def apply(host: HostApi, body: dict[str, Any]) -> web.Response:
    """Run the feedback ``body`` asks for; the JSON answer (or 400)."""
    reason = problem(body)
    if reason:
        return web.json_response({"error": reason}, status=400)
    ids = list(body["event_ids"])
    if body["action"] == "ack":
        changed = await host.queries.acknowledge(ids)
    else:
        until = time.time() + 60 * body.get("minutes", DEFAULT_SNOOZE_MINUTES)
        changed = await host.queries.snooze(ids, until)
    return web.json_response({"ok": True, "changed": changed})
