"""``events push --wait N`` spends N in all: the push gets what is left of N after the
open of a locked database used some of it (it was given the whole N again, about 2N)."""

from __future__ import annotations

import sqlite3

from bothost.cli.runtime import Runtime
from bothost.events import push as push_module
from bothost.events.push import Pushed
from bothost.store import StoreError


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_the_push_gets_only_what_the_open_left_of_the_wait(home, monkeypatch):
    clock = FakeClock()
    runtime = Runtime(clock=clock)
    opened = runtime.host
    tries = []

    def host_locked_once(lock_wait=None):
        tries.append((clock.now, lock_wait))
        if len(tries) == 1:  # the open waited out a lock: 29.5 s of the 30 gone
            clock.now += 29.5
            locked = StoreError("the database is locked by another process for too long")
            raise locked from sqlite3.OperationalError("database is locked")
        return opened(lock_wait)

    given = []

    async def recording_push(host, source, type, payload, dedupe=None, patience=0.0):
        given.append(patience)
        return Pushed(event_id=1)

    monkeypatch.setattr(runtime, "host", host_locked_once)
    monkeypatch.setattr(push_module, "push_event", recording_push)
    try:
        pushed = await runtime.push_event("disk", "event/full", {"id": "1"}, patience=30)
    finally:
        runtime.close()
    assert pushed.event_id == 1
    # each open may wait on the lock only for what is left: no open runs past the 30 s
    assert [wait for _, wait in tries] == [30.0, 0.5]
    assert given == [0.5]
