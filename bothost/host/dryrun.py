"""A tick's dry run, assembled from the host: ``bothost tick --dry-run``.

It judges the pending queue (read, not claimed) or the events of a file with the tick's own
:func:`~bothost.events.tick.decide` — the config's rules, the stored ones, the shipped
defaults, the mutes, the quiet hours and the configured model — and writes nothing: it takes
no lease, records no tick, briefing or delivery, and sends nothing. The rules and mutes are
read from the host's store. The model, when one is configured, is asked for real, but its
turn (the conversation rows, the usage row it is metered with) runs on a host built over a
throwaway copy of the database, deleted afterwards: a dry run's model call is not counted
in ``bothost usage`` and spends no budget. With a PostgreSQL store the copy starts empty, so
that turn sees no budget already spent.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import sqlite3
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

from bothost.config import StoreConfig
from bothost.events import ledger
from bothost.events.llm_triage import LlmTriage
from bothost.events.tick import MAX_EVENTS_PER_TICK, Decision, decide
from bothost.events.tick_agent import run_tick_agent
from bothost.events.triage import QueuedEvent
from bothost.hooks.startup import Registered
from bothost.host.host import Host
from bothost.host.wiring import OFFLINE
from bothost.store.target import store_target
from bothost.usage import attribution


async def dry_run(
    host: Host, events: list[QueuedEvent] | None, now: float, trigger: str = "manual"
) -> tuple[list[QueuedEvent], Decision | None]:
    """The events judged (``events``, or the pending queue when None) and what a tick at
    ``now`` would make of them; None when there is nothing to judge."""
    if events is None:
        events = await host.store.run(lambda db: ledger.pending(db, now, MAX_EVENTS_PER_TICK))
    if not events:
        return events, None
    tick = host.config.tick
    if host.config.llm.provider in OFFLINE:
        return events, await decide(host.store, tick, events, None, now, trigger)
    async with scratch_host(host) as scratch:
        llm = LlmTriage(functools.partial(run_tick_agent, scratch))
        with attribution.for_tick(None):  # the tick's kind of call, for the budgets it checks
            return events, await decide(host.store, tick, events, llm, now, trigger)


@contextlib.asynccontextmanager
async def scratch_host(host: Host) -> AsyncIterator[Host]:
    """A host like ``host`` whose store is a copy of its database in a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="bothost-dry-run-") as tmp:
        copy = Path(tmp) / "scratch.db"
        target = store_target(host.config.store.url, host.home)
        if isinstance(target, Path) and target.exists():
            await host.store.run(lambda db: None)  # opened and migrated before it is copied
            copy_database(target, copy)
        config = dataclasses.replace(host.config, store=StoreConfig(url=f"sqlite:///{copy}"))
        registered = Registered(providers=host.providers, platforms=host.platforms)
        scratch = Host(config, host.home, host.pm, registered)
        try:
            yield scratch
        finally:
            await scratch.crosshost.stop()
            llm = scratch._llm
            if llm is not None and hasattr(llm, "close"):
                await llm.close()
            scratch.store.close()


def copy_database(source: Path, copy: Path) -> None:
    """SQLite's online backup of ``source`` into ``copy``, read through a read-only handle."""
    src = sqlite3.connect(f"{source.as_uri()}?mode=ro", uri=True)
    dst = sqlite3.connect(copy)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
