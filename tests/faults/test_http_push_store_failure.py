"""A store that cannot write while an MCP server over Streamable HTTP floods events:
nothing it sent is dropped.

A stdio server is simply not read while its events are held (its pipe fills, its writes
wait). Over HTTP the same must hold: the host stops reading the server's SSE stream (TCP
back-pressure: the server's writes wait) while events are held, and resumes when the
store takes them again. The flood server pushes small numbered events, thousands per read,
and moves on only past what was written to the stream; the stored numbers must run
1..TOTAL without a gap, and nothing may be counted as dropped.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from tests.helpers import free_port, make_host, until
from tests.mcp.mcp_helpers import listening_process
from tests.store_faults import disk_numbers as numbers
from tests.store_faults import refuse_disk_events

FLOOD = Path(__file__).with_name("flood_server.py")
TOTAL = 4_000  # twice the notification queue's drop bound (2 × 1,000), so a drop shows
WAIT = 30.0  # seconds for each condition; a few on an idle machine


async def test_http_server_events_are_held_not_dropped_while_the_store_fails(
    home, tmp_path, caplog
):
    caplog.set_level(logging.INFO)
    port = free_port()
    command = [sys.executable, str(FLOOD), "--http", f"127.0.0.1:{port}"]
    env = {"FLOOD_TOTAL": str(TOTAL), "FLOOD_BURST": str(TOTAL)}
    with listening_process(command, port, tmp_path / "flood.log", env):
        host = make_host(
            home,
            {
                "mcp": {
                    "servers": {
                        "weather": {"enabled": False},
                        "disk": {"url": f"http://127.0.0.1:{port}/mcp"},
                    }
                }
            },
        )
        host.store.call(refuse_disk_events)  # from the start, every insert of its events fails

        def dropped() -> list[str]:  # said in the server's own log, as flood control
            log = home / "logs" / "mcp" / "disk.log"
            text = log.read_text() if log.exists() else ""
            return [line for line in text.splitlines() if "beyond the notification" in line]

        def failures() -> int:
            return sum("could not be written" in r.getMessage() for r in caplog.records)

        await host.start(serve_http=False, platforms=False, tick=False)
        try:
            await until(lambda: failures() >= 1, timeout=WAIT)
            host.store.call(lambda db: db.execute("DROP TRIGGER refuse"))  # space returns
            await until(lambda: len(numbers(host)) >= TOTAL or dropped(), timeout=WAIT)
            stored = numbers(host)
        finally:
            await host.stop()
    assert dropped() == [], "events the host read were dropped"
    assert stored == list(range(1, TOTAL + 1)), "events the failing store refused are lost"
