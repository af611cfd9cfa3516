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

from bothost.config import McpServerConfig
from bothost.store.conn import Conn

TABLE = "mcp_servers"
OVERRIDE = "override"
JSON_FIELDS = ("args", "env", "env_passthrough", "headers", "tools", "roots")


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
        "singleton": None if config.singleton is None else int(config.singleton),
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
    if row.get("singleton") is not None:
        config.singleton = bool(row["singleton"])
    return StoredServer(row["name"], config, row.get("origin") or "cli")


def load(db: Conn) -> dict[str, StoredServer]:
    return {row["name"]: from_row(row) for row in db.query(f"SELECT * FROM {TABLE} ORDER BY name")}


def upsert(db: Conn, row: dict[str, Any]) -> None:
    """Insert ``row`` or update the named server's columns it carries (others stay)."""
    columns = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    updates = ", ".join(f"{c} = excluded.{c}" for c in row if c != "name")
    db.execute(
        f"INSERT INTO {TABLE} ({columns}) VALUES ({marks})"
        f" ON CONFLICT (name) DO UPDATE SET {updates}",
        list(row.values()),
    )


def save(db: Conn, name: str, config: McpServerConfig, origin: str) -> None:
    row = to_row(name, config, origin)
    existing = db.value(f"SELECT created_at FROM {TABLE} WHERE name = ?", [name])
    row["created_at"] = existing if existing is not None else time.time()
    upsert(db, row)


def delete(db: Conn, name: str) -> bool:
    return db.execute(f"DELETE FROM {TABLE} WHERE name = ?", [name]).rowcount > 0


def set_enabled(db: Conn, name: str, enabled: bool) -> None:
    db.execute(f"UPDATE {TABLE} SET enabled = ? WHERE name = ?", [int(enabled), name])


def set_override(db: Conn, name: str, enabled: bool) -> None:
    """Record `enabled` for the config server `name`."""
    upsert(
        db,
        {"name": name, "enabled": int(enabled), "origin": OVERRIDE, "created_at": time.time()},
    )
