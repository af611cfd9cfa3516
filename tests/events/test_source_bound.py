"""Per-source bounds on pending events (``tick.max_pending_per_source``): at the bound a
source's events are held — not queued, and the producer told so (:class:`SourceHeldError`)
— while other sources go on; the source is taken again once a tick has settled some of its
events. Nothing held is recorded: a webhook id held is queued when sent again."""

from __future__ import annotations

import logging

import pytest

from bothost.api import SourceHeldError
from bothost.config import ConfigError, TickConfig, load
from bothost.events.queue import EventQueue
from bothost.models import Event
from tests.conftest import both_backends
from tests.helpers import ingest_once, ingest_one, make_host, write_config

pytestmark = both_backends

T0 = 1_800_000_000.0
BOUND = 3


def alert(n: int, source: str = "flood") -> Event:
    return Event(source, "event/n", {"id": str(n), "n": n}, received_at=T0 + n)


def pending(store, source: str = "flood") -> int:
    return store.call(
        lambda db: db.execute(
            "SELECT count(*) FROM events WHERE source = ? AND status = 'pending'", (source,)
        ).fetchone()[0]
    )


def settle(store, source: str = "flood") -> None:
    """What a tick does to the events it triaged: they leave ``pending``."""
    store.call(
        lambda db: db.execute("UPDATE events SET status = 'done' WHERE source = ?", (source,))
    )


@pytest.fixture
async def bounded(store):
    queue = EventQueue(store, TickConfig(max_pending_per_source=BOUND))
    queue.bounds.recheck = 0.0  # a held source is counted again at its next event, not later
    yield queue
    await queue.close()


async def test_a_source_at_its_bound_is_held_and_others_go_on(bounded, store):
    ids = [await ingest_one(bounded, alert(n)) for n in range(1, BOUND + 1)]
    assert all(isinstance(i, int) for i in ids)
    with pytest.raises(SourceHeldError) as held:
        await ingest_one(bounded, alert(BOUND + 1))
    assert held.value.source == "flood" and held.value.retry_after > 0
    assert "tick.max_pending_per_source" in str(held.value)
    assert pending(store) == BOUND
    assert isinstance(await ingest_one(bounded, alert(1, source="calm")), int)  # not its neighbours


async def test_a_batch_fills_to_the_bound_and_holds_the_rest(bounded, store):
    outcomes = await bounded.ingest([alert(n) for n in range(1, BOUND + 3)])
    assert [type(o).__name__ for o in outcomes] == ["int"] * BOUND + ["SourceHeldError"] * 2
    assert pending(store) == BOUND


async def test_the_source_is_taken_again_once_a_tick_settled_its_events(bounded, store):
    await bounded.ingest([alert(n) for n in range(1, BOUND + 1)])
    with pytest.raises(SourceHeldError):
        await ingest_one(bounded, alert(BOUND + 1))
    settle(store)
    assert isinstance(await ingest_one(bounded, alert(BOUND + 1)), int)
    assert pending(store) == 1


async def test_a_held_webhook_id_is_not_recorded_and_its_retry_is_queued(bounded, store):
    for n in range(1, BOUND + 1):
        await ingest_once(bounded, alert(n), f"msg_{n}")
    with pytest.raises(SourceHeldError):
        await ingest_once(bounded, alert(BOUND + 1), "msg_held")
    settle(store)
    receipt = await ingest_once(bounded, alert(BOUND + 1), "msg_held")  # the sender's retry
    assert receipt.event_id is not None and not receipt.duplicate


async def test_a_duplicate_is_no_new_pending_event_and_is_not_held(bounded):
    for n in range(1, BOUND + 1):
        await ingest_once(bounded, alert(n), f"msg_{n}")
    receipt = await ingest_once(bounded, alert(1), "msg_1")  # a retry of what was queued
    assert receipt.duplicate


async def test_holding_warns_once_per_source_and_minute(bounded, caplog):
    caplog.set_level(logging.WARNING)
    await bounded.ingest([alert(n) for n in range(1, BOUND + 1)])
    for n in range(BOUND + 1, BOUND + 20):
        with pytest.raises(SourceHeldError):
            await ingest_one(bounded, alert(n))
    lines = [r.getMessage() for r in caplog.records if "held" in r.getMessage()]
    assert len(lines) == 1, lines
    assert "'flood'" in lines[0] and "tick.max_pending_per_source" in lines[0]


async def test_a_plugins_ingest_sees_the_source_held(home):
    host = make_host(home, {"tick": {"max_pending_per_source": 1}})
    await host.start(serve_http=False, platforms=False, tick=False, mcp=False)
    try:
        assert isinstance(await host.ingest_event("flood", "event/n", {"id": "1"}), int)
        with pytest.raises(SourceHeldError):
            await host.ingest_event("flood", "event/n", {"id": "2"})
        assert host.events.bounds.held_now() == {"flood": 1}
    finally:
        await host.stop()


def test_the_bound_is_configured_and_checked_by_key_path(tmp_path):
    assert TickConfig().max_pending_per_source == 100_000  # the documented default
    path = write_config(tmp_path / "bothost.yaml", {"tick": {"max_pending_per_source": 0}})
    with pytest.raises(ConfigError, match=r"tick\.max_pending_per_source"):
        load(path, tmp_path / "home")
