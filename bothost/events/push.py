"""Events a person or a script queues from the command line, with an answer they can act on.

``bothost events push`` and the events a CLI command's MCP servers push differ from the
host's in one way: someone is waiting for the command to end. So the store's failures are
tried again as the host does (:mod:`bothost.events.backpressure`) but only for
``CLI_PATIENCE`` seconds; then the command ends non-zero naming the store's error, with
nothing of the event written (its insert is one transaction). An event not queued for what
it is gets the one reason that kept it out: a duplicate (of which event, within which
window), a plugin's ``event_received`` (which plugin), its size (how big, the limit), or
its source at ``tick.max_pending_per_source`` (held: at once, since only a tick makes room).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bothost.api import SourceHeldError
from bothost.events.backpressure import store_failed
from bothost.events.dedupe import canonical_json, dedupe_key
from bothost.events.intake import Dropped, Taken
from bothost.mcp.inbound import CLOSE_DRAIN
from bothost.models import Event
from bothost.store import StoreError

# Seconds a command keeps trying a store that fails: a lock, a busy writer or a failover is
# over by then, a full disk is not, and a script wants its answer to try again itself later.
CLI_PATIENCE = 5.0


class EventsNotStoredError(StoreError):
    """The store could not take events within the command's patience; none was written."""


@dataclass
class Pushed:
    """What became of a pushed event: its row id, or why it was not queued."""

    event_id: int | None = None
    why_not: str | None = None
    refused: bool = False  # the event itself must change (not a duplicate, not a plugin)


def not_stored(count: int, outcome: Taken, patience: float) -> EventsNotStoredError:
    what = "the event" if count == 1 else f"{count} events"
    return EventsNotStoredError(
        f"not queued: the store could not take {what} within {patience:g} s ({outcome}); "
        "nothing of it was written — try again later (`bothost doctor` checks the database)"
    )


async def push_event(
    host: Any,
    source: str,
    type: str,
    payload: dict[str, Any],
    dedupe: str | None = None,
    patience: float = CLI_PATIENCE,
) -> Pushed:
    """Queue one event through the intake; raises EventsNotStoredError."""
    event = Event(source=source, type=type, payload=payload, dedupe_key=dedupe)
    text = canonical_json(event.payload)
    size = len(text.encode("utf-8", "replace"))  # as the queue counts it
    limit = host.events.max_payload
    if size > limit:  # before the hooks, as a webhook's 413: the queue would refuse it
        return Pushed(
            why_not=f"payload too large: {size} bytes, the limit is {limit} "
            "(keep what a briefing needs: a summary, an id, a link to the rest)",
            refused=True,
        )
    (outcome,) = await host.intake.take([event], patience=patience)
    if isinstance(outcome, Dropped):
        return Pushed(why_not=f"dropped by plugin {outcome.plugin!r} (its event_received hook)")
    if isinstance(outcome, SourceHeldError):
        return Pushed(why_not=f"{outcome} (`bothost tick` takes them now)", refused=True)
    if store_failed(outcome):
        raise not_stored(1, outcome, patience)
    if isinstance(outcome, Exception):
        raise outcome  # refused for what it is (the store's own words)
    if isinstance(outcome, int):
        return Pushed(event_id=outcome)
    return Pushed(why_not=await _duplicate(host, dedupe_key(event, text)))


async def _duplicate(host: Any, key: str) -> str:
    window = host.config.tick.dedupe_window
    since = time.time() - window
    found = await host.store.run(
        lambda db: db.execute(
            "SELECT id, received_at FROM events WHERE dedupe_key = ? AND received_at > ?"
            " ORDER BY id DESC LIMIT 1",
            [key, since],
        ).fetchone()
    )
    of = (
        f"of event {found[0]} (queued {datetime.fromtimestamp(found[1]):%Y-%m-%d %H:%M}) "
        if found
        else ""
    )
    return (
        f"a duplicate {of}with the same dedupe key {key!r} within tick.dedupe_window "
        f'({_duration(window)}); give it another payload "id" to queue it as a new event'
    )


def _duration(seconds: float) -> str:
    # as the config says it (24h, 15m), days only for a week or more
    units = (
        (("d", 86400), ("h", 3600), ("m", 60)) if seconds >= 7 * 86400 else (("h", 3600), ("m", 60))
    )
    for unit, size in units:
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


# A command's MCP servers are stopped with a drain of CLOSE_DRAIN (2 s) for their last events;
# their retries end within it, so the store's own error is what the command reports.
SERVER_EVENT_PATIENCE = CLOSE_DRAIN / 2


class Recorder:
    """The ``on_events`` of a command's MCP servers: each backlog through
    ``Host.take_events`` (the intake) with ``SERVER_EVENT_PATIENCE``; what the store did not take is
    counted with the store's error, for the command to report once its own result is shown
    (the server has moved past those events: they cannot be asked for again)."""

    def __init__(self, host: Any, patience: float = SERVER_EVENT_PATIENCE) -> None:
        self.host = host
        self.patience = patience
        self.lost: dict[str, int] = {}  # source → events the store did not take
        self.why = ""

    async def __call__(self, events: list[Event]) -> list[Taken]:
        source = events[0].source if events else ""
        try:
            outcomes = await self.host.take_events(events, patience=self.patience)
        except asyncio.CancelledError:  # the command ended (its server stopped) meanwhile
            self._lose(source, len(events), "the command ended while the store still refused them")
            raise
        # held ones too: a command's servers are not waited for until a tick makes room
        failed = [o for o in outcomes if store_failed(o) or isinstance(o, SourceHeldError)]
        if failed:
            self._lose(source, len(failed), str(failed[0]))
        return outcomes

    def _lose(self, source: str, count: int, why: str) -> None:
        self.lost[source] = self.lost.get(source, 0) + count
        self.why = self.why or why

    def error(self) -> EventsNotStoredError | None:
        """What to tell the user about events not stored, or None when every one was."""
        if not self.lost:
            return None
        counts = ", ".join(
            f"{n} event{'s' if n != 1 else ''} {source} pushed" for source, n in self.lost.items()
        )
        return EventsNotStoredError(
            f"{counts} not stored: the store did not take them within {self.patience:g} s "
            f"({self.why}); the server has moved past them — check the database "
            "(`bothost doctor`)"
        )
