"""A ``check`` job's turn: the owner's prompt run as an agent turn, and what it notifies.

The turn runs as the job's owner (their platform and id, so permission rules, budgets and
usage are theirs) in a fresh session of its own, with one extra tool, ``notify(text)``, on
the tick agent's pattern (:mod:`bothost.events.tick_agent`): only what the model passes to
``notify`` is posted, and a turn that ends without calling it had nothing to say. Approvals
are asked in the job's conversation when it is on the owner's platform (nobody answering
means no); elsewhere nobody is asked, and a call that needs approval is refused.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import TYPE_CHECKING

from bothost.agent.tools import Tool, tool_from_function
from bothost.agent.turn import Turn
from bothost.api import Outcome
from bothost.models import Address, Session
from bothost.schedules.store import Job
from bothost.schedules.when import zone_named

if TYPE_CHECKING:
    from bothost.host.host import Host

NOTIFY_DESCRIPTION = (
    "Post `text` to where this scheduled check reports. Call it only with what the person"
    " asked to be told; when there is nothing to tell, do not call it."
)
NOTIFY_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "What to tell the person."}},
    "required": ["text"],
    "additionalProperties": False,
}
PROMPT = (
    "This is a scheduled check {owner} asked for; it runs now ({now}). Do what it asks. If"
    " there is something they should be told, call notify(text) with it; if not, answer"
    " briefly without calling notify: nothing is posted then.\n\nThe check: {text}"
)


class CheckFailedError(Exception):
    """The check's turn failed (a model error, a spent budget); the job tries again."""


def notify_tool(take: list[str], turn: list[Turn]) -> Tool:
    def notify(text: str = "", **_ignored: object) -> str:
        if text.strip():
            take.append(text.strip())
        turn[0].done = True  # the round with notify is the last
        return "Noted: it will be posted."

    return tool_from_function(
        notify, name="notify", description=NOTIFY_DESCRIPTION, schema=NOTIFY_SCHEMA
    )


def owner_session(host: Host, job: Job) -> Session:
    """The session a check runs in: the owner's identity, and the job's conversation when
    it is on the owner's platform (where an approval can be asked of them)."""
    platform, _, user = job.owner.partition(":")
    target = Address.parse(job.target)
    address = target if target.platform == platform else Address(platform, f"schedule-{job.id}")
    return Session(
        id=f"schedule:{job.id}:{uuid.uuid4().hex[:8]}",
        address=address,
        user=user,
        platform=host.active.get(platform),
    )


async def run_check(host: Host, job: Job) -> list[str]:
    """Run ``job``'s prompt as its owner; the texts the turn passed to ``notify``.

    Raises:
        CheckFailedError: the turn failed or a usage budget stopped it.
    """
    texts: list[str] = []
    holder: list[Turn] = []
    session = owner_session(host, job)
    turn = Turn(host, session, extra_tools=[notify_tool(texts, holder)])
    holder.append(turn)
    now = datetime.now(zone_named(job.tz)).strftime("%a %Y-%m-%d %H:%M %Z")
    reply = await turn.run(PROMPT.format(owner=job.owner, now=now, text=job.text))
    if turn.refused is not None:
        raise CheckFailedError(str(turn.refused))
    if not turn.done and reply.outcome == Outcome.FAILED:
        raise CheckFailedError(reply.text.strip() or "the turn failed")
    return texts
