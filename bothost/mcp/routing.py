"""What a session's inbound side asks of it: whose question, whose progress, where it goes.

:class:`Routing` is the part of :class:`~bothost.mcp.session.ClientSession` that answers
the few questions of :class:`~bothost.mcp.inbound.InboundOwner`: which conversation's call a
server's question belongs to (the :class:`~bothost.mcp.elicitation.Asker` each pending call
carries), whose progress a token names, which deadlines wait while a person is asked, and
where events, resource notices and listen acknowledgements go. It reads the session's
state and writes none of it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

from bothost.mcp import inbound, listen, revision, taskcall
from bothost.mcp.elicitation import Ask, Asker
from bothost.mcp.outgoing import Callback, Pending
from bothost.models import Event

# Requests whose clock stops while a server's question waits for a person: the call, and
# the tasks/result request a task's questions arrive on.
HELD_WHILE_ASKING = ("tools/call", "tasks/result")


class Routing:
    """Answers to the inbound side (a part of ClientSession: see module docstring)."""

    name: str
    log: logging.Logger
    ask: Ask | None
    pending: dict[Any, Pending]
    task_calls: set[taskcall.TaskCall]
    protocol_version: str | None
    listening: listen.Listen | None
    on_events: Callback | None
    on_resources: Callback | None

    if TYPE_CHECKING:  # the session's other parts (no stub may shadow them at run time)

        def _find(self, id_: Any) -> Pending | None: ...

    def asker_for(self, related: Any, task: str | None = None) -> Ask | None:
        """Who answers a server's question: the asker of the call it belongs to.

        A question that names its task (`task`) belongs to the call running that task.
        Over HTTP the server asks on the stream of the call that caused it (``related``).
        Over stdio nothing names the call, so while every call in flight that brought an
        asker belongs to one conversation (one key), the question is that conversation's;
        with calls of several conversations in flight it could be anyone's, and it goes to
        the session's default (usually nobody: the answer is ``cancel``).
        """
        asker = self.conversation_of(related, task)
        return asker.ask if asker is not None else self.ask

    def conversation_of(self, related: Any, task: str | None = None) -> Asker | None:
        """The :class:`Asker` of the conversation a server's request belongs to, found as
        :meth:`asker_for` finds it; None when no one conversation's call can be named."""
        owner = self._task_call(task)
        if owner is not None and owner.asker is not None:
            return owner.asker
        call = self._find(related) if inbound.hashable(related) else None
        if call is not None and call.asker is not None:
            return call.asker
        askers = {p.asker.key: p.asker for p in self.pending.values() if p.asker is not None}
        askers.update((c.asker.key, c.asker) for c in self.task_calls if c.asker is not None)
        if len(askers) == 1:
            return next(iter(askers.values()))
        return None

    def progress_for(self, token: Any) -> Callback | None:
        """The progress callback of the call in flight that `token` names, if any."""
        pending = self._find(token) if inbound.hashable(token) else None
        if pending is not None:
            return pending.on_progress
        owner = next((c for c in self.task_calls if c.token == token), None)
        return owner.on_progress if owner is not None else None

    def progressed(self, token: Any) -> None:
        """The call `token` names reported progress: its deadline moves."""
        pending = self._find(token) if inbound.hashable(token) else None
        if pending is not None and pending.deadline is not None:
            pending.deadline.progressed()
        for owner in self.task_calls:  # a task's token stays valid for the task's life
            if owner.token == token:
                owner.deadline.progressed()

    def task_status(self, params: dict[str, Any]) -> None:
        """A ``notifications/tasks/status``: the call running that task takes it."""
        owner = self._task_call(params.get("taskId"))
        if owner is not None:
            owner.update(params)

    @contextmanager
    def asking(self, related: Any, task: str | None = None) -> Iterator[None]:
        """While a server's question waits for a person, the calls it may belong to wait
        without a clock: the call running the task it names (and the tasks/result requests
        such questions arrive on), or the call `related` names (HTTP), else — nothing on the
        wire says which (stdio) — every tool call in flight."""
        owner = self._task_call(task)
        call = self._find(related) if inbound.hashable(related) else None
        if owner is not None:
            results = [p for p in self.pending.values() if p.method == "tasks/result"]
            calls, deadlines = [*results, *([call] if call else [])], [owner.deadline]
        elif call is not None:
            calls, deadlines = [call], []
        else:
            calls = list(self.pending.values())
            deadlines = [c.deadline for c in self.task_calls]
        deadlines += [
            p.deadline for p in calls if p.deadline is not None and p.method in HELD_WHILE_ASKING
        ]
        with ExitStack() as stack:
            for deadline in dict.fromkeys(deadlines):
                stack.enter_context(deadline.hold())
            yield

    def _task_call(self, task_id: Any) -> taskcall.TaskCall | None:
        if not isinstance(task_id, str):
            return None
        return next((c for c in self.task_calls if c.task_id == task_id), None)

    def listen_to(self, uris: list[str]) -> bool:
        """Ask for the updates of `uris` on the listen stream (2026-07-28); False when this
        session keeps none (a one-shot command's, or an older revision's)."""
        if self.listening is None or not revision.stateless(self.protocol_version):
            return False
        self.listening.open(uris)
        return True

    def listen_notice(self, method: str, params: dict[str, Any]) -> None:
        """A listen stream's acknowledgement (bothost.mcp.listen)."""
        if self.listening is not None:
            self.listening.take(method, params)

    def resources_notice(self, method: str, params: dict[str, Any]) -> None:
        """A resource notification: the owner's subscriptions act on it (sync, cheap)."""
        if self.on_resources is not None:
            try:
                self.on_resources(method, params)
            except Exception:  # boundary: the owner's listener
                self.log.exception("resource notification listener failed")

    async def events(self, items: list[tuple[str, dict[str, Any]]]) -> None:
        """Hand ``event/*`` notifications (method, params), in the order sent, to the owner's
        ``on_events`` at once, as :class:`~bothost.models.Event` s of this server."""
        if self.on_events is not None:
            now = time.time()  # one clock read for the backlog: its events arrived together
            events = [Event(self.name, method, params, now) for method, params in items]
            await inbound.await_maybe(self.on_events(events))
