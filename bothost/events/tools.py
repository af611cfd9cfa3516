"""The agent's handle on the queue: ``events_list`` and ``tick_now`` tools, offline commands.

:func:`register_event_tools` adds two native tools to a host's registry and teaches the
offline agent the commands ``events [STATUS]`` and ``tick``. Listing returns payload text
third parties wrote (an email subject), so it is ``private`` and ``untrusted``; a tick
sends briefings only to ``tick.deliver_to``, so its egress is ``fixed``.
"""

from __future__ import annotations

from typing import Any

from bothost.events import feedback
from bothost.events.tick import Ticker

LISTED = 20  # events shown to the agent; the CLI lists more


def register_event_tools(host: Any) -> None:
    """Register the tools on ``host.registry`` and the commands on the offline agent."""

    async def events_list(status: str = "") -> str:
        """List the newest queued events (pending, claimed, done, failed or snoozed).

        Args:
            status: only events in this state; empty for all.
        """
        rows = await host.store.run(lambda db: feedback.list_events(db, status or None, LISTED))
        if not rows:
            return f"No {status} events." if status else "No events."
        return "\n".join(
            f"#{r['id']} {r['status']} {r['priority'] or '-'} {r['source']}/{r['type']}: "
            f"{r['payload'].get('summary') or r['payload'].get('subject') or ''}".rstrip()
            for r in rows)

    async def tick_now() -> str:
        """Triage the event queue now and deliver a briefing to the configured targets."""
        ticker = getattr(host, "ticker", None) or Ticker.for_host(host)
        result = await ticker.tick("agent")
        if result.status == "busy":
            return "A tick is already running; its briefing will follow."
        if not result.briefings:
            return f"Nothing to brief: {result.events} events looked at."
        return "\n\n".join(b.text for b in result.briefings)

    host.registry.register(events_list, plugin="bothost.events", private=True, untrusted=True)
    host.registry.register(tick_now, plugin="bothost.events", egress="fixed")
    commands = getattr(host, "offline_commands", None)
    if commands is not None:
        commands["events"] = ("events [STATUS]      the newest queued events",
                              lambda rest: ("events_list", {"status": rest.strip()}))
        commands["tick"] = ("tick                 triage the queue and brief now",
                            lambda rest: ("tick_now", {}))
