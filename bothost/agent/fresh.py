"""The ``/new`` command: a fresh conversation in the same place.

A conversation is keyed by where it happens (the session id is the address: ``web:default``,
``console:``, a Slack DM), so a person cannot move to a new one by going elsewhere. ``/new``
stores a fresh start (:func:`bothost.agent.history.start_fresh`): the model reads nothing
said before it, the old messages stay in the store. :meth:`bothost.host.host.Host.handle_message`
routes it before any turn, so every platform has it without code of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bothost.agent import history

if TYPE_CHECKING:
    from bothost.host.host import Host
    from bothost.models import Session

WORDS = ("/new",)
STARTED = "Started a new conversation."
BUSY = "A reply is still being written here: say `stop` first, or `/new` once it is done."


def is_new(text: str) -> bool:
    """Whether ``text`` is the command (Slack users put a space before a leading ``/``)."""
    return text.strip().lower() in WORDS


async def start(host: Host, session: Session) -> str:
    """Start ``session`` afresh unless a turn of it runs here; what to answer."""
    if any(not task.done() for task in host.turns.get(session.address, ())):
        return BUSY  # its messages would land on both sides of the fresh start
    await history.start_fresh(host.store, session.id)
    host.told_left_out.pop(session.id, None)  # a new conversation is told again
    return STARTED
