"""A push server for the multi-host test: counts, and pushes one event per number.

Its position (the last number a client got) lives in ``position.json`` in the kit's state
directory, written only after the event was sent, as the bundled watchers do. Each event says
which process sent it and from which position that process started (``resumed_from``), so a
test can see that a server moved to another host resumed where the last one stopped.
``COUNTER_POLL_SECONDS`` sets the pace (default 0.2 s).
"""

from __future__ import annotations

import json
import os

from bothost.mcp_servers.kit import Outbox, Server

server = Server("counter", version="1.0.0", instructions="Counts, for tests.")
started: dict[str, int] = {}


@server.tool(
    capabilities={"private": False, "untrusted": False, "egress": "none", "destructive": False}
)
async def position() -> str:
    """The last number pushed."""
    return str(load())


def load() -> int:
    try:
        return int(json.loads((server.state_dir() / "position.json").read_text())["n"])
    except FileNotFoundError:
        return 0


@server.watcher(interval_env="COUNTER_POLL_SECONDS", default_interval=0.2)
async def count(srv: Server) -> None:
    n = load()
    started.setdefault("at", n)
    payload = {
        "id": f"count-{n + 1}",
        "summary": f"count {n + 1}",
        "n": n + 1,
        "pid": os.getpid(),
        "resumed_from": started["at"],
    }
    if await Outbox(srv.notify).send("event/count", payload):
        path = server.state_dir() / "position.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"n": n + 1}))
        os.replace(tmp, path)


if __name__ == "__main__":
    server.run()
