"""A store that cannot write while an MCP server pushes events: nothing it pushed is lost.

An MCP notification has no acknowledgement, and a watcher moves its position on as soon as
the event is written to its pipe; so an event the host read and then failed to store (a full
disk, a database that went away) is gone for good unless the host keeps it. The host keeps
it: the failed events are written again, with backoff, and meanwhile the server is not read,
so its pipe fills and its own writes wait (back-pressure). Here a real push server (the
counter of the multi-host test, one numbered event per poll) runs while every insert of its
events fails as a full disk does, then space "returns": the stored numbers must run 1..N
without a gap.
"""

from __future__ import annotations

import logging
import sqlite3
import sys
from pathlib import Path

from tests.helpers import make_host, until
from tests.store_faults import disk_numbers as numbers
from tests.store_faults import refuse_disk_events

COUNTER = Path(__file__).parents[1] / "integration" / "counter_server.py"
WAIT = 60.0  # seconds for each condition; a few on an idle machine


async def test_events_a_failing_store_could_not_take_are_kept_and_written_later(home, caplog):
    caplog.set_level(logging.INFO)  # the queue logs a failing store at INFO
    host = make_host(
        home,
        {
            "mcp": {
                "servers": {
                    "weather": {"enabled": False},
                    "disk": {
                        "command": sys.executable,
                        "args": [str(COUNTER)],
                        "env": {"COUNTER_POLL_SECONDS": "0.05"},
                    },
                }
            }
        },
    )
    host.store.call(refuse_disk_events)  # from the start, every insert of its events fails
    await host.start(serve_http=False, platforms=False, tick=False)
    try:

        def failures() -> int:
            return sum("could not be written" in r.getMessage() for r in caplog.records)

        await until(lambda: failures() >= 2, timeout=WAIT)
        host.store.call(lambda db: db.execute("DROP TRIGGER refuse"))  # space returns
        await until(lambda: len(numbers(host)) >= 20, timeout=WAIT)
    finally:
        await host.stop()
    conn = sqlite3.connect(home / "bothost.db")  # the host's store is closed by now
    try:
        stored = sorted(
            int(r[0])
            for r in conn.execute(
                "SELECT json_extract(payload, '$.n') FROM events WHERE source = 'disk'"
            )
        )
    finally:
        conn.close()
    assert stored == list(range(1, len(stored) + 1)), "events the failing store refused are lost"
