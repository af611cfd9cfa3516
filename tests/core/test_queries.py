"""``host.queries``: what plugins read of core tables, after real turns and real events."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bothost.models import Address, IncomingMessage
from tests.conftest import both_backends
from tests.helpers import make_host, until

pytestmark = both_backends


@pytest.fixture
async def host(home, store_target):
    on_postgres = isinstance(store_target, str)
    host = make_host(home, {"store": {"url": store_target}} if on_postgres else None)
    await host.start(serve_http=False, platforms=False, mcp=False, tick=False)
    yield host
    await host.stop()


async def say(host, address: Address, text: str) -> None:
    await host.handle_message(
        IncomingMessage(address=address, text=text, user="ana", is_admin=True)
    )


async def test_transcript_and_session_after_turns(host):
    here, there = Address("web", "q"), Address("web", "other")
    assert await host.queries.session(here) is None
    await say(host, here, "help")
    await say(host, here, 'call read_output {"ref": "missing"}')
    await say(host, there, "help")
    session = await host.queries.session(here)
    assert (session.id, session.platform, session.channel, session.user) == (
        "web:q",
        "web",
        "q",
        "ana",
    )
    lines = await host.queries.transcript(here)
    assert [m.role for m in lines] == ["user", "assistant", "user", "assistant"]
    assert lines[0].text == "help" and lines[0].at <= lines[-1].at
    assert [m.text for m in await host.queries.transcript(here, limit=2)] == [
        'call read_output {"ref": "missing"}',
        lines[-1].text,
    ]
    calls = await host.queries.tool_calls()
    assert [(c.session, c.tool, c.is_error) for c in calls] == [("web:q", "read_output", True)]
    figures = await host.queries.figures()
    assert figures.messages_by_platform == {"web": 3} and figures.turns == 3
    assert [(t.tool, t.calls, t.errors) for t in figures.tools] == [("read_output", 1, 1)]


async def test_events_counts_and_feedback(host):
    ids = [
        await host.ingest_event("ops", "alert", {"id": str(n), "host": "db-1"}) for n in range(3)
    ]
    assert await host.queries.queue_counts() == {
        "pending": 3,
        "claimed": 0,
        "snoozed": 0,
        "done": 0,
        "failed": 0,
    }
    rows = await host.queries.events([ids[2], ids[0], 999_999])
    assert [(e.id, e.source, e.payload["id"], e.status) for e in rows] == [
        (ids[0], "ops", "0", "pending"),
        (ids[2], "ops", "2", "pending"),
    ]
    assert await host.queries.acknowledge([ids[0]]) == 1
    assert await host.queries.acknowledge([ids[0]]) == 0  # idempotent
    assert await host.queries.snooze([ids[1]], until=2e9) == 1
    counts = await host.queries.queue_counts()
    assert (counts["done"], counts["snoozed"], counts["pending"]) == (1, 1, 1)
    mute = await host.queries.mute("ops", "alert", {"payload.host": "db-1"}, created_by="t")
    assert await host.queries.mute("ops", "alert", {"payload.host": "db-1"}) == mute
    assert (await host.queries.figures()).events_by_status == {
        "done": 1,
        "snoozed": 1,
        "pending": 1,
    }


async def test_webhook_receipts(host):
    assert not await host.queries.webhook_seen("msg_1")
    await host.queries.remember_webhook("msg_old", at=100.0)
    await host.queries.remember_webhook("msg_1", at=200.0, forget_before=150.0)
    assert await host.queries.webhook_seen("msg_1")
    assert not await host.queries.webhook_seen("msg_old")  # pruned
    assert (await host.queries.figures()).webhook_ids == 1
    await host.queries.forget_webhook("msg_1")
    assert not await host.queries.webhook_seen("msg_1")
    assert not await host.queries.event_queued("msg_2")
    await host.ingest_event("hook", "webhook", {"a": 1}, dedupe_key="msg_2")
    assert await host.queries.event_queued("msg_2")


async def test_ticks_newest_first(host):
    def write(db):
        db.execute(
            "INSERT INTO ticks (trigger, started_at, finished_at, status, events,"
            " briefings) VALUES ('timer', 10, 12.5, 'ok', 2, 1)"
        )
        db.execute("INSERT INTO ticks (trigger, started_at, status) VALUES ('cli', 20, 'running')")

    await host.store.run(write)
    ticks = await host.queries.ticks()
    assert [(t.trigger, t.status, t.finished_at) for t in ticks] == [
        ("cli", "running", None),
        ("timer", "ok", 12.5),
    ]
    figures = await host.queries.figures()
    assert (figures.finished_ticks, figures.tick_seconds) == (1, 2.5)
    assert figures.last_tick is not None and figures.last_tick.trigger == "timer"
    assert figures.ticks_by_status == {"ok": 1, "running": 1}


async def test_views_of_the_running_host(host):
    assert host.queries.mcp_servers() == []  # no manager started
    assert host.queries.platforms() == []  # platforms not started
    assert host.queries.connections() is None  # not serving HTTP
    assert host.queries.store_writable() is True


ECHO_SERVER = Path(__file__).resolve().parent.parent / "mcp_servers" / "echo_server.py"


async def test_mcp_servers_with_their_tool_names(home):
    servers = {
        "echo": {"command": sys.executable, "args": [str(ECHO_SERVER)]},
        "weather": {"enabled": False},
    }  # the packaged default's; not needed here
    host = make_host(home, {"mcp": {"servers": servers}})
    await host.start(serve_http=False, platforms=False, tick=False)
    try:

        def echo_row():
            return next(s for s in host.queries.mcp_servers() if s.name == "echo")

        await until(lambda: echo_row().state == "ready")
        echo = echo_row()
        assert (echo.name, echo.origin, echo.enabled, echo.transport) == (
            "echo",
            "config",
            True,
            "stdio",
        )
        assert "echo" in echo.tool_names and echo.tools == len(echo.tool_names)
    finally:
        await host.stop()
