"""A migrated store for the schedules tests, and a delivery target that records."""

from __future__ import annotations

import pytest

from bothost.store import Store, core_migrations


class Recorder:
    """A target that records what it was given and can be told to fail."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []
        self.failing = False

    async def __call__(self, target, briefing):
        if self.failing:
            raise ConnectionError(f"{target} is down")
        self.sent.append((target, briefing.text))
        return f"ref-{len(self.sent)}"


@pytest.fixture
def store(store_target):
    s = Store(store_target, core_migrations())
    yield s
    s.close()


@pytest.fixture
def recorder():
    return Recorder()
