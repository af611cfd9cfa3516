"""The roster: which MCP servers there should be, and what each one is called.

Servers come from two sources: config (``mcp.servers``) and the ``mcp_servers`` table (rows
that ``bothost mcp add``, ``install``, ``import`` and ``register_mcp`` wrote; see
:mod:`bothost.mcp.stored`). :func:`desired_servers` merges them with the one set of rules
everything uses — the manager when it starts and stops servers, ``bothost mcp list``, and
``bothost plugins``:

* a config server wins over a table row of the same name; that row is kept and listed as
  *shadowed*;
* an ``override`` row only carries ``enabled`` for the config server of its name (``bothost
  mcp disable weather`` on a packaged server) and is never a server of its own.

A server's identity is its name (:data:`NAME`), and everything else is derived from it
here: the ``mcp:<name>`` entry in plugin listings and its origin.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass

from bothost.config import McpServerConfig
from bothost.mcp import stored

NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")  # safe in tool names, file names and log names
CONFIG = "config"  # the origin of a server defined in the config file…
TABLE = "db"  # …and of one from the mcp_servers table


# The admin tools' group (bothost.agent.admin.GROUP): a server of that name would be a
# group the model can never activate, its tools unreachable and listed nowhere.
RESERVED = frozenset({"config"})


def name_problem(name: str) -> str | None:
    """What is wrong with `name` as a server name, or None."""
    if not NAME.fullmatch(name):
        return f"{name!r}: a server name uses letters, digits, _ and - (at most 40)"
    if name in RESERVED:
        return f"{name!r} is reserved for the admin tools' group; choose another server name"
    return None


def plugin_name(name: str) -> str:
    """How plugin listings (``bothost plugins``) and tools' ``plugin`` field name a server."""
    return f"mcp:{name}"


@dataclass(frozen=True)
class DesiredServer:
    """One server that should exist, as configured."""

    name: str
    config: McpServerConfig
    origin: str  # CONFIG or TABLE
    added_by: str  # CONFIG, or who wrote the row: cli, register_mcp, install, import

    @property
    def plugin(self) -> str:
        return plugin_name(self.name)


@dataclass(frozen=True)
class Roster:
    """What :func:`desired_servers` found: the servers, and the rows a config server hides."""

    servers: dict[str, DesiredServer]
    shadowed: dict[str, stored.StoredServer]


def desired_servers(
    config_servers: Mapping[str, McpServerConfig],
    rows: Mapping[str, stored.StoredServer],
    only: set[str] | None = None,
) -> Roster:
    """Config plus table, by the rules above; with `only`, just those names (the shadowed
    rows are all kept: listings show them whichever servers a command starts)."""
    servers: dict[str, DesiredServer] = {}
    shadowed: dict[str, stored.StoredServer] = {}
    for name, config in config_servers.items():
        row = rows.get(name)
        if row is not None and row.origin == stored.OVERRIDE:
            config = dataclasses.replace(config, enabled=row.config.enabled)
        elif row is not None:
            shadowed[name] = row
        servers[name] = DesiredServer(name, config, CONFIG, CONFIG)
    for name, row in rows.items():
        if name not in config_servers and row.origin != stored.OVERRIDE:
            servers[name] = DesiredServer(name, row.config, TABLE, row.origin)
    if only is not None:
        servers = {n: s for n, s in servers.items() if n in only}
    return Roster(servers, shadowed)
