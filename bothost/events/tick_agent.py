"""The tick agent's loop: a turn with its own prompt, the events, and the ``notify`` tool.

It runs like any agent turn (it may activate MCP servers and call read-only tools to look
things up) in a fresh session of its own, with nobody to ask: a tool that needs approval is
refused. The turn ends after the round in which the model called ``notify``; the items it
passed come back to :mod:`bothost.events.llm_triage`, which defines that tool and checks
the items. A turn that ends without a ``notify`` call (a spent budget, a model error or
timeout, an answer in prose) raises, so the tick sorts by its rules and says why.
:func:`bothost.host.wiring.build_ticker` binds the host to :func:`run_tick_agent`.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from bothost import redact
from bothost.agent.turn import Turn
from bothost.api import Outcome
from bothost.events.llm_triage import TriageFailedError, notify_tool
from bothost.models import Address, Session

if TYPE_CHECKING:
    from bothost.host.host import Host


async def run_tick_agent(host: Host, system_prompt: str, user_content: str) -> list[dict[str, Any]]:
    """Run the tick agent; the items of its ``notify`` calls.

    Raises:
        BudgetSpentError: a usage budget stopped the turn before the model was asked.
        TriageFailedError: the turn ended without a ``notify`` call.
    """
    tick_id = uuid.uuid4().hex[:8]
    session = Session(id=f"tick:{tick_id}", address=Address("tick", tick_id), user="tick")
    items: list[dict[str, Any]] = []

    def take(found: list[dict[str, Any]]) -> None:
        items.extend(found)
        turn.done = True  # the round with notify is the last

    turn = Turn(host, session, extra_tools=[notify_tool(take)], system=system_prompt)
    # event payloads are third parties' text: any credential of ours in them stays here
    reply = await turn.run(redact.conceal(user_content))
    if turn.done:
        return items  # notify(items=[]) is an answer too: nothing worth showing
    if turn.refused is not None:
        raise turn.refused  # a spent budget: the tick falls back to its rules and says so
    if reply.outcome == Outcome.FAILED:  # the turn's text says what failed, in one line
        raise TriageFailedError(f"the tick agent failed ({reply.text.rstrip('.')})")
    raise TriageFailedError("the model answered without calling notify")
