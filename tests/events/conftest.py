"""Fixtures for the event queue and tick tests: a migrated store and a recording target."""

from __future__ import annotations

import pytest

from bothost.config import TickConfig
from bothost.events import events_migrations
from bothost.events.queue import EventQueue
from bothost.store import Store, core_migrations


class Recorder:
    """A delivery target that records what it was given and can be told to fail."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, object]] = []
        self.failing: set[str] = set()

    async def __call__(self, target, briefing):
        if target in self.failing:
            raise ConnectionError(f"{target} is down")
        self.sent.append((target, briefing))
        return f"ref-{len(self.sent)}"

    def texts(self) -> list[str]:
        return [b.text for _, b in self.sent]


@pytest.fixture
def store(store_target):
    """SQLite, or PostgreSQL too in modules marked ``both_backends``."""
    s = Store(store_target, [*core_migrations(), *events_migrations()])
    yield s
    s.close()


@pytest.fixture
def config():
    return TickConfig(deliver_to=["console:", "web:briefings"], timezone="Europe/Zurich")


@pytest.fixture
async def queue(store, config):
    q = EventQueue(store, config)
    yield q
    await q.close()


@pytest.fixture
def recorder():
    return Recorder()
