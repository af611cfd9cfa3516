"""Where a server's OAuth state lives: its client registration and its tokens.

One JSON record per server in the ``mcp_oauth`` table (migration core:4) — never in YAML,
never in a log line (every token read or obtained is handed to :mod:`bothost.redact`),
never in anything the model sees of that server. The authorization server chooses those
values, so they are remembered for their server only (``redact.remember_scoped``): masked
in every log and in that server's output, never in another's. The record also carries the
authorization server's endpoints, so a refresh needs no discovery, and ``login_needed`` —
why a person must log in again — so ``bothost mcp list`` in another process can say so.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Protocol

from bothost import redact
from bothost.store.conn import Conn

TABLE = "mcp_oauth"
SECRET_FIELDS = ("access_token", "refresh_token")
CLIENT_SECRET_FIELDS = ("client_secret",)

Record = dict[str, Any]


def remember_secrets(server: str, record: Record | None) -> None:
    """Teach the redaction a record's tokens, client secret and DPoP key, for `server`'s
    output."""
    if not record:
        return
    values = [record.get(k) for k in SECRET_FIELDS]
    values += [(record.get("client") or {}).get(k) for k in CLIENT_SECRET_FIELDS]
    values.append((record.get("dpop_key") or {}).get("d"))  # our DPoP private key
    redact.remember_scoped(server, (v for v in values if isinstance(v, str) and v))


class TokenStore(Protocol):
    async def load(self, server: str) -> Record | None: ...

    async def save(self, server: str, record: Record) -> None: ...

    async def clear(self, server: str) -> None: ...


class MemoryTokens:
    """Records held in memory (the conformance driver, tests)."""

    def __init__(self) -> None:
        self.records: dict[str, Record] = {}

    async def load(self, server: str) -> Record | None:
        record = self.records.get(server)
        return json.loads(json.dumps(record)) if record is not None else None

    async def save(self, server: str, record: Record) -> None:
        self.records[server] = json.loads(json.dumps(record))

    async def clear(self, server: str) -> None:
        self.records.pop(server, None)


def load_record(db: Conn, server: str) -> Record | None:
    row = db.execute(f"SELECT record FROM {TABLE} WHERE server = ?", [server]).fetchone()
    if row is None:
        return None
    record = json.loads(row[0])
    remember_secrets(server, record)
    return record if isinstance(record, dict) else None


def save_record(db: Conn, server: str, record: Record) -> None:
    with db.transaction():
        db.execute(
            f"INSERT INTO {TABLE} (server, record, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (server) DO UPDATE SET record = excluded.record, "
            "updated_at = excluded.updated_at",
            [server, json.dumps(record), time.time()],
        )


def clear_record(db: Conn, server: str) -> None:
    with db.transaction():
        db.execute(f"DELETE FROM {TABLE} WHERE server = ?", [server])


def all_records(db: Conn) -> dict[str, Record]:
    return {row[0]: json.loads(row[1]) for row in db.execute(f"SELECT server, record FROM {TABLE}")}


class DbTokens:
    """Records in the store's ``mcp_oauth`` table (see module docstring)."""

    def __init__(self, store: Any) -> None:
        self.store = store

    async def load(self, server: str) -> Record | None:
        return await self.store.run(lambda db: load_record(db, server))

    async def save(self, server: str, record: Record) -> None:
        remember_secrets(server, record)
        await self.store.run(lambda db: save_record(db, server, record))

    async def clear(self, server: str) -> None:
        await self.store.run(lambda db: clear_record(db, server))


async def wait_for_change(
    tokens: TokenStore, server: str, seen: Record | None, interval: float
) -> None:
    """Return once the server's record differs from `seen` (another process logged in)."""
    while (await tokens.load(server)) == seen:
        await asyncio.sleep(interval)
