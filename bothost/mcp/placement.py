"""Where an MCP server runs when several hosts share one store: everywhere, or on the leader.

A server that pushes events from a watcher (the bundled gmail, gcal, weather and ssh servers,
and any server marked ``singleton: true``) must run once across all hosts: run on each, it
would poll the same mailbox as many times and move its position in as many state
directories. Such a *singleton* runs on the leader only (:mod:`bothost.crosshost.leadership`) and
moves when leadership does; every other server runs on every host. ``singleton`` unset means
"decided by the command": true for the bundled watchers, false otherwise, so a server from the
packaged config or added with ``bothost mcp add weather -- bothost-mcp-weather`` needs no key,
and ``singleton: false`` runs a bundled one on every host (its tools everywhere, its events
then pushed as many times — deduplicated by their ids).

A host that is not the leader keeps its singleton servers in the ``standby`` state: listed,
not running, their tools not offered to turns on that host.
"""

from __future__ import annotations

import re
from pathlib import Path

from bothost.config import McpServerConfig

# The bundled servers that push events (DESIGN: "Bundled MCP servers"), by console script…
WATCHER_COMMANDS = {f"bothost-mcp-{n}" for n in ("gmail", "gcal", "weather", "ssh")}
# …or by module, run with `python -m bothost.mcp_servers.gmail` (a checkout: mcp_servers.gmail)
WATCHER_MODULE = re.compile(r"^(bothost\.)?mcp_servers\.(gmail|gcal|weather|ssh)(\.server)?$")
STANDBY = "standby"  # a singleton's state on a host that is not the leader


def is_singleton(config: McpServerConfig) -> bool:
    """Whether the server runs on the leader only (see module docstring)."""
    if config.singleton is not None:
        return config.singleton
    if config.url or not config.command:
        return False
    if Path(config.command).name in WATCHER_COMMANDS:
        return True
    args = list(config.args)
    return "-m" in args[:-1] and bool(WATCHER_MODULE.match(args[args.index("-m") + 1]))


def state_dir(home: Path, name: str) -> Path:
    """Where a singleton keeps its position on this host (the server's ``BOTHOST_STATE_DIR``).

    The kit's own default for a server is ``$BOTHOST_HOME/state/<its name>``, so a bundled
    server under its usual name keeps the directory it always had."""
    return Path(home) / "state" / name
