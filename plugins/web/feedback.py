"""``POST /api/feedback``: the buttons on the dashboard's briefings.

[Ack] and [Snooze] are the host's idempotent feedback functions (``host.queries``), so a
double click or two open pages leave the same state: acknowledge marks the item's events
done, snooze hides them until the given number of minutes has passed. [Less like this] and
[More like this] (``less``, ``more``) only ask the host for the rule it would add and store
nothing; the page shows it with [Apply], which sends the proposal's key back (``apply``).
Every request here passed :mod:`security` (loopback or the token), so it is the operator's,
an admin's, as in the web chat: an apply is stored as ``web:web``'s.
"""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from bothost.api import HostApi

MAX_IDS = 1000  # one briefing item never groups more events than a tick shows
MAX_KEY = 100  # characters of a proposal's key (``less:low:42``)
WHO = "web:web"  # who applied a rule from the page: the operator, as in the web chat
MAX_SNOOZE_MINUTES = 7 * 24 * 60
DEFAULT_SNOOZE_MINUTES = 60


def problem(body: dict[str, Any]) -> str | None:
    ids = body.get("event_ids")
    if body.get("action") not in ("ack", "snooze", "less", "more", "apply"):
        return "action must be ack, snooze, less, more or apply"
    if body["action"] == "apply":
        key = body.get("proposal")
        if not isinstance(key, str) or not 0 < len(key) <= MAX_KEY:
            return "proposal must be the key a less or more answer gave"
        return None
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
    if body["action"] == "apply":
        try:
            done = await host.apply_triage_rule(body["proposal"], WHO, admin=True)
        except ValueError as exc:
            return web.json_response({"error": str(exc)}, status=400)
        return web.json_response({"ok": done.applied, "text": done.text, "rule_id": done.rule_id})
    ids = list(body["event_ids"])
    if body["action"] in ("less", "more"):
        found = await host.propose_triage_rule(ids, body["action"])
        return web.json_response(
            {
                "ok": True,
                "text": found.text,
                "proposal": found.key,
                "match": found.match,
                "priority": found.priority,
                "was": found.was,
            }
        )
    if body["action"] == "ack":
        changed = await host.queries.acknowledge(ids)
    else:
        until = time.time() + 60 * body.get("minutes", DEFAULT_SNOOZE_MINUTES)
        changed = await host.queries.snooze(ids, until)
    return web.json_response({"ok": True, "changed": changed})
