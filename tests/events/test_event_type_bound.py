"""An event's type is at most 200 characters whoever produces it (webhooks had the bound;
an MCP server's 100,006-character ``event/…`` method was stored whole): ``events push``
refuses a longer one as a usage error, a plugin's ingest raises, nothing is stored."""

from __future__ import annotations

import sqlite3

import pytest

from bothost.api import MAX_EVENT_TYPE, EventRejectedError
from tests.helpers import make_host, run_bothost

LONG = "event/" + "x" * (MAX_EVENT_TYPE - len("event/") + 1)


def types(home) -> list[str]:
    conn = sqlite3.connect(home / "bothost.db")
    try:
        return [row[0] for row in conn.execute("SELECT type FROM events")]
    finally:
        conn.close()


def test_events_push_refuses_an_overlong_type(home):
    at_bound = LONG[:MAX_EVENT_TYPE]
    assert run_bothost("events", "push", "ops", at_bound, "{}", home=home).returncode == 0
    result = run_bothost("events", "push", "ops", LONG, "{}", home=home)
    assert result.returncode == 2, result.stderr
    assert f"at most {MAX_EVENT_TYPE} characters" in result.stderr
    assert len(result.stderr) < 1000  # the type is not echoed whole
    assert types(home) == [at_bound]


async def test_a_plugin_ingest_of_an_overlong_type_raises_and_stores_nothing(home):
    host = make_host(home)
    await host.start(serve_http=False, platforms=False, mcp=False, tick=False)
    try:
        with pytest.raises(EventRejectedError, match=f"at most {MAX_EVENT_TYPE}"):
            await host.ingest_event("plug", "event/" + "y" * 100_000, {"id": "1"})
        assert await host.ingest_event("plug", "event/ok", {"id": "2"}) is not None
    finally:
        await host.stop()
    assert types(home) == ["event/ok"]
