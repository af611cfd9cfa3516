"""A push server that floods: each poll pushes ``FLOOD_BURST`` small numbered events at
once, up to ``FLOOD_TOTAL`` in all, as fast as its client reads them.

Its position lives in memory and moves only past an event a client got (the kit's
``Outbox``), so whatever the client did not take is pushed again on the next poll; an
event missing from the client's store was therefore dropped by the client. Small events
are the hard case for a reader that pauses between reads: one read carries thousands.
Run with ``--http HOST:PORT`` for Streamable HTTP (stdio otherwise).
"""

from __future__ import annotations

import os

from bothost.mcp_servers.kit import Outbox, Server

server = Server("flood", version="1.0.0", instructions="Pushes numbered events, for tests.")
BURST = int(os.environ.get("FLOOD_BURST", "500"))
TOTAL = int(os.environ.get("FLOOD_TOTAL", "5000"))
position = {"n": 0}


@server.tool(
    capabilities={"private": False, "untrusted": False, "egress": "none", "destructive": False}
)
async def sent() -> str:
    """How many events a client got."""
    return str(position["n"])


@server.watcher(interval_env="FLOOD_POLL_SECONDS", default_interval=0.05)
async def flood(srv: Server) -> None:
    outbox = Outbox(srv.notify)
    for n in range(position["n"] + 1, min(position["n"] + BURST, TOTAL) + 1):
        if not await outbox.send("event/n", {"id": str(n), "n": n}):
            return
        position["n"] = n


if __name__ == "__main__":
    server.run()
