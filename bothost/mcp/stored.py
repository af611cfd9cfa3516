"""Servers kept in the ``mcp_servers`` table: added at run time, never written to YAML.

``bothost mcp add``, ``install``, ``import`` and the agent's ``register_mcp`` add rows here;
the ``origin`` column says which. A row whose origin is ``override`` only carries the
``enabled`` flag for a server defined in config (``bothost mcp disable weather`` on a
packaged server), because enabling and disabling are run-time changes too. A config server
of the same name as an ordinary row wins; the row stays and is listed as shadowed.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

import sqlite_utils

from bothost.config import McpServerConfig

TABLE = "mcp_servers"
OVERRIDE = "override"
JSON_FIELDS = ("args", "env", "env_passthrough", "headers", "tools")


@dataclasses.dataclass
class StoredServer:
    name: str
    config: McpServerConfig
    origin: str  # who added it: cli, register_mcp, install, import — or "override"


def to_row(name: str, config: McpServerConfig, origin: str) -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": name,
        "command": config.command,
        "url": config.url,
        "enabled": int(config.enabled),
        "description": config.description,
        "timeout": config.timeout,
        "max_timeout": config.max_timeout,
        "origin": origin,
    }
    for key in JSON_FIELDS:
        row[key] = json.dumps(getattr(config, key))
    return row


def from_row(row: dict[str, Any]) -> StoredServer:
    values: dict[str, Any] = {}
    for key in JSON_FIELDS:
        if row.get(key):
            values[key] = json.loads(row[key])
    config = McpServerConfig(
        command=row.get("command"),
        url=row.get("url"),
        enabled=bool(row.get("enabled", 1)),
        description=row.get("description") or "",
        **values,
    )
    if row.get("timeout"):
        config.timeout = float(row["timeout"])
    if row.get("max_timeout"):
        config.max_timeout = float(row["max_timeout"])
    return StoredServer(row["name"], config, row.get("origin") or "cli")


def load(db: sqlite_utils.Database) -> dict[str, StoredServer]:
    return {row["name"]: from_row(row) for row in db[TABLE].rows_where(order_by="name")}


def save(db: sqlite_utils.Database, name: str, config: McpServerConfig, origin: str) -> None:
    row = to_row(name, config, origin)
    existing = list(db[TABLE].rows_where("name = ?", [name], select="created_at"))
    row["created_at"] = existing[0]["created_at"] if existing else time.time()
    db.table(TABLE).upsert(row, pk="name")


def delete(db: sqlite_utils.Database, name: str) -> bool:
    return db.execute(f"DELETE FROM {TABLE} WHERE name = ?", [name]).rowcount > 0


def set_enabled(db: sqlite_utils.Database, name: str, enabled: bool) -> None:
    db.execute(f"UPDATE {TABLE} SET enabled = ? WHERE name = ?", [int(enabled), name])


def set_override(db: sqlite_utils.Database, name: str, enabled: bool) -> None:
    """Record `enabled` for the config server `name`."""
    db.table(TABLE).upsert(
        {"name": name, "enabled": int(enabled), "origin": OVERRIDE, "created_at": time.time()},
        pk="name",
    )
