"""Whose model call this is: the turn, session and person, or the tick.

The turn and the tick set the attribution around the code that calls the model (a context
variable, so it follows the call through every await of that task, and into tasks started
from it), and :class:`~bothost.usage.meter.Metered` reads it for each call. A turn run by
the tick agent stays the tick's: its calls count against the tick's budget and no person's.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from bothost.models import Session

TURN, TICK, OTHER = "turn", "tick", "other"  # the kinds of calls


@dataclass(frozen=True)
class Attribution:
    kind: str = OTHER
    turn: str | None = None
    session: str | None = None
    user: str | None = None  # "platform:user", so the same name on two platforms is two people
    tick: int | None = None  # the tick's row in `ticks`
    # the MCP server whose sampling request this call answers (bothost.agent.sampling):
    # the call is the turn's (or the tick's) as well, under that person's budget
    server: str | None = None


NOBODY = Attribution()  # a call outside any turn or tick
CURRENT: ContextVar[Attribution | None] = ContextVar("bothost_usage_attribution", default=None)


def current() -> Attribution:
    return CURRENT.get() or NOBODY


@contextlib.contextmanager
def attributed(who: Attribution) -> Iterator[Attribution]:
    token = CURRENT.set(who)
    try:
        yield who
    finally:
        CURRENT.reset(token)


def user_key(session: Session) -> str:
    return f"{session.address.platform}:{session.user or '-'}"


def for_turn(turn_id: str, session: Session) -> contextlib.AbstractContextManager[Attribution]:
    """The attribution of a turn: a person's, or the tick's when the tick runs it."""
    outer = current()
    if outer.kind == TICK:
        return attributed(dataclasses.replace(outer, turn=turn_id, session=session.id))
    return attributed(Attribution(TURN, turn_id, session.id, user_key(session)))


def for_tick(tick_id: int | None) -> contextlib.AbstractContextManager[Attribution]:
    return attributed(Attribution(TICK, tick=tick_id))
