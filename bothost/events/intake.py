"""The one way in for pushed events: the hooks, then the queue, as one batch.

Every producer calls :meth:`Intake.take`: MCP servers (the host's ``take_events``, each
server's backlog at once), webhooks (``HostApi.ingest_webhook_event``), ``bothost events
push`` (:mod:`bothost.events.push`) and plugins (``HostApi.ingest_event``). It runs the
``event_received`` hooks on each :class:`~bothost.models.Event` (a plugin's False drops it:
a :class:`Dropped` outcome naming the plugin, and a log line a minute per source) and hands
the kept ones to :meth:`EventQueue.ingest <bothost.events.queue.EventQueue.ingest>` as one
batch, where the per-source bounds, the payload bound and dedupe apply.

Producers differ only in what they make of the outcomes (a webhook's 429, ``events push``'s
exit 1, a plugin's :class:`~bothost.api.SourceHeldError`, an MCP server read no more) and
in ``patience``, how long the store's failures are tried again
(:mod:`bothost.events.backpressure`): None until stored (an MCP server cannot send again),
a command's few seconds, or one try (:data:`ONE_TRY`: a webhook's sender and a plugin
retry themselves).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import pluggy

from bothost.events.backpressure import ingest_until_stored
from bothost.events.queue import DUPLICATE, EventOutcome, EventQueue
from bothost.hooks.call import call_each_named
from bothost.logs.rate import RateLimitedLog
from bothost.models import Event

logger = logging.getLogger(__name__)

ONE_TRY = 0.0  # patience of a producer that retries itself: the store's error at once


@dataclass(frozen=True, slots=True)
class Dropped:
    """An event a plugin's ``event_received`` hook refused (returned False)."""

    plugin: str


Taken = EventOutcome | Dropped  # what became of one event given to the intake


class OnceIds(Protocol):
    """The record of once-only ids (:class:`bothost.queries.Queries` keeps it)."""

    async def webhook_seen(self, webhook_id: str) -> bool: ...

    async def remember_webhook(self, webhook_id: str, at: float) -> bool: ...


class Intake:
    """The hooks and the queue of one host (see module docstring)."""

    def __init__(self, pm: pluggy.PluginManager, queue: EventQueue, once_ids: OnceIds) -> None:
        self.pm = pm
        self.queue = queue
        self.once_ids = once_ids
        # a plugin's drops are a producer's to repeat (a server's flood): a line a minute
        self.drops = RateLimitedLog(logger)

    async def take(
        self,
        events: Sequence[Event],
        *,
        patience: float | None = ONE_TRY,
        once_id: str | None = None,
    ) -> list[Taken]:
        """Run the hooks on each event and queue the kept ones together; one outcome per
        event, in order (nothing is raised for an event).

        ``once_id`` (one event: a webhook's id) is claimed with the insert; the hooks see
        each id once: a known id is :data:`~bothost.events.queue.DUPLICATE` before them,
        and a dropped event's id is recorded (a retry of it is a duplicate too)."""
        if not self.pm.hook.event_received.get_hookimpls():  # no plugin looks: ask nothing
            # (without hooks the claim in the queue's transaction decides alone)
            return list(await ingest_until_stored(self.queue, list(events), patience, once_id))
        if once_id is not None and await self.once_ids.webhook_seen(once_id):
            return [DUPLICATE]
        outcomes: list[Taken] = [None] * len(events)
        kept: list[int] = []
        for position, event in enumerate(events):
            dropped = await self._dropped_by(event)
            if dropped is None:
                kept.append(position)
                continue
            outcomes[position] = dropped
            if once_id is not None and not await self.once_ids.remember_webhook(
                once_id, event.received_at
            ):
                outcomes[position] = DUPLICATE  # another host took the id meanwhile
        if not kept:
            return outcomes
        stored = await ingest_until_stored(self.queue, [events[p] for p in kept], patience, once_id)
        for position, outcome in zip(kept, stored, strict=True):
            outcomes[position] = outcome
        return outcomes

    async def _dropped_by(self, event: Event) -> Dropped | None:
        for plugin, verdict in await call_each_named(self.pm, "event_received", event=event):
            if verdict is False:
                self.drops.info(
                    event.source, "event %s/%s dropped by a plugin", event.source, event.type
                )
                return Dropped(plugin)
        return None
