"""The agent's handle on the queue: ``events_list`` and ``tick_now`` tools, offline commands.

Both tools reach the host through the interface in their
:class:`~bothost.agent.tools.ToolContext` (:class:`bothost.api.HostApi`), so they are plain
functions the ``events`` plugin registers with ``register_tools``. Listing
returns payload text third parties wrote (an email subject), so it is ``private`` and
``untrusted``; a tick sends briefings only to ``tick.deliver_to``, so its egress is
``fixed``. :func:`register_offline_commands` teaches the offline agent ``events [STATUS]`` and
``tick``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bothost.agent.tools import ToolContext
from bothost.hookspecs import OfflineCommand

LISTED = 20  # events shown to the agent; the CLI lists more
TOOL_OPTIONS: dict[str, dict[str, bool | str]] = {
    "events_list": {"private": True, "untrusted": True},
    "tick_now": {"egress": "fixed"},
}


async def events_list(ctx: ToolContext, status: str = "") -> str:
    """List the newest queued events (pending, claimed, done, failed or snoozed).

    Args:
        status: only events in this state; empty for all.
    """
    rows = await ctx.host.queries.recent_events(status or None, LISTED)
    if not rows:
        return f"No {status} events." if status else "No events."
    return "\n".join(
        f"#{r['id']} {r['status']} {r['priority'] or '-'} {r['source']}/{r['type']}: "
        f"{r['payload'].get('summary') or r['payload'].get('subject') or ''}".rstrip()
        for r in rows
    )


async def tick_now(ctx: ToolContext) -> str:
    """Triage the event queue now and deliver a briefing to the configured targets."""
    result = await ctx.host.tick_now("agent")
    if result.status == "busy":
        return "A tick is already running; its briefing will follow."
    if not result.briefings:
        return f"Nothing to brief: {result.events} events looked at."
    return "\n\n".join(b.text for b in result.briefings)


def register_tools(register: Any) -> None:
    """Hand both tools to a ``register_tools`` callback."""
    for func in (events_list, tick_now):
        register(func, **TOOL_OPTIONS[func.__name__])


def register_offline_commands(register: Callable[[str, str, OfflineCommand], None]) -> None:
    """``events [STATUS]`` and ``tick`` for the offline agent."""
    register(
        "events",
        "events [STATUS]      the newest queued events",
        lambda rest: ("events_list", {"status": rest.strip()}),
    )
    register(
        "tick", "tick                 triage the queue and brief now", lambda rest: ("tick_now", {})
    )
