"""The tick agent's loop: a turn with its own prompt, the events, and the ``notify`` tool.

It runs like any agent turn (it may activate MCP servers and call read-only tools to look
things up) in a fresh session of its own, with nobody to ask: a tool that needs approval is
refused. The turn ends after the round in which the model called ``notify``; the items it
passed come back to :mod:`bothost.events.llm_triage`, which defines that tool and checks
the items. :func:`bothost.wiring.build_ticker` binds the host to :func:`run_tick_agent`.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from bothost.agent.turn import Turn
from bothost.events.llm_triage import notify_tool
from bothost.models import Address, Session

if TYPE_CHECKING:
    from bothost.host import Host


async def run_tick_agent(host: Host, system_prompt: str, user_content: str) -> list[dict[str, Any]]:
    """Run the tick agent; the items of its ``notify`` calls (empty if it never called it)."""
    tick_id = uuid.uuid4().hex[:8]
    session = Session(id=f"tick:{tick_id}", address=Address("tick", tick_id), user="tick")
    items: list[dict[str, Any]] = []

    def take(found: list[dict[str, Any]]) -> None:
        items.extend(found)
        turn.done = True  # the round with notify is the last

    turn = Turn(host, session, extra_tools=[notify_tool(take)], system=system_prompt)
    await turn.run(user_content)
    if turn.refused is not None and not items:
        raise turn.refused  # a spent budget: the tick falls back to its rules and says so
    return items
