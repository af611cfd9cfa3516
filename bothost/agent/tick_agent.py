"""The tick agent's loop: a turn with its own prompt, the events, and the ``notify`` tool.

It runs like any agent turn (it may activate MCP servers and call read-only tools to look
things up) in a fresh session of its own, with nobody to ask: a tool that needs approval is
refused. The turn ends after the round in which the model called ``notify``; the items it
passed come back to :mod:`bothost.events.llm_triage`, which checks them.
"""

from __future__ import annotations

import uuid
from typing import Any

from bothost.agent.tools import Tool, ToolContext
from bothost.agent.turn import Turn
from bothost.models import Address, Session


async def run_tick_agent(host: Any, system_prompt: str, user_content: str,
                         tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run the tick agent; the items of its ``notify`` call (empty if it never called it)."""
    tick_id = uuid.uuid4().hex[:8]
    session = Session(id=f"tick:{tick_id}", address=Address("tick", tick_id), user="tick")
    items: list[dict[str, Any]] = []
    turn: Turn | None = None

    def capture(spec: dict[str, Any]) -> Tool:
        async def run(arguments: dict[str, Any], ctx: ToolContext) -> str:
            found = arguments.get("items") or []
            items.extend(i for i in found if isinstance(i, dict))
            if turn is not None:
                turn.done = True
            return f"Noted {len(found)} items."

        return Tool(name=spec["name"], description=spec.get("description", ""),
                    schema=spec.get("input_schema") or spec.get("parameters") or {},
                    run=run)

    turn = Turn(host, session, extra_tools=[capture(t) for t in tools], system=system_prompt)
    await turn.run(user_content)
    return items
