"""A singleton server's saved position, carried from host to host through the store.

The bundled watchers keep their position (a Gmail history id, a calendar sync token, the
alerts already sent) as files in a state directory (``mcp_servers.kit``). On one machine that
is enough; when leadership moves to another host the files stay behind. So on a shared store
(PostgreSQL) the host gives each singleton stdio server a directory of its own
(``BOTHOST_STATE_DIR``, see :func:`bothost.mcp.placement.state_dir`) and keeps a copy of it in
the ``mcp_state`` table (one row per server: the files, base64, as one JSON object):

* **restore**: before the server starts on a host that just became the leader, the directory
  is made equal to the stored copy (when there is one), so the server resumes where the last
  leader's left off;
* **save**: while the server runs (every :data:`SAVE_INTERVAL`, when a file changed) and when
  it stops, the directory is copied back. A copy must never be ahead of the queue — a
  position saved past an event the host had not queued yet would lose that event on a move.
  The server writes its position only after writing the event to its stdout, so the copy is
  read first, then a ``ping`` is answered (every notification written before the read
  precedes the answer in the pipe), then the host waits until each event taken so far is
  committed (:meth:`bothost.mcp.inbound.Inbound.drain`). Only then is the copy stored.
* the write is **fenced**: it happens only while this process holds the leader lease, so a
  host that lost leadership cannot overwrite what the new leader saved.

A copy may lag behind the files (a leader SIGKILLed between two saves): the next leader then
pushes again the events since that copy, and the queue's dedupe (their ``id``) absorbs them.
Nothing is lost; nothing is queued twice within ``tick.dedupe_window``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bothost.crosshost import lease
from bothost.crosshost.leadership import LEADER_LOCK
from bothost.store.conn import Conn

logger = logging.getLogger(__name__)

SAVE_INTERVAL = 2.0  # a watcher moves at most this much ahead of its copy in the store
BARRIER_TIMEOUT = 10.0  # the ping and the events' commit; a copy not saved now is saved later
MAX_STATE_BYTES = 1024 * 1024  # a position is small; a directory bigger than this is not copied
Files = dict[str, str]  # path relative to the directory -> content, base64


def read_dir(directory: Path) -> Files | None:
    """The files under ``directory``; None when it is too big to carry."""
    files: Files = {}
    total = 0
    if not directory.is_dir():
        return files
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        try:
            data = path.read_bytes()
        except FileNotFoundError:  # replaced while we looked (a watcher's atomic rename)
            continue
        total += len(data)
        if total > MAX_STATE_BYTES:
            logger.warning("state directory %s is over %d bytes; not copied", directory, total)
            return None
        files[path.relative_to(directory).as_posix()] = base64.b64encode(data).decode()
    return files


def write_dir(directory: Path, files: Files) -> None:
    """Make ``directory`` hold exactly ``files`` (0700 directories, 0600 files)."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    for path in [p for p in directory.rglob("*") if p.is_file()]:
        if path.relative_to(directory).as_posix() not in files:
            path.unlink()
    for name, content in files.items():
        target = directory / name
        if directory.resolve() not in target.resolve().parents:
            logger.warning("skipping state file %r outside %s", name, directory)
            continue
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.restore")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(base64.b64decode(content))
        os.replace(tmp, target)


def load(db: Conn, server: str) -> Files | None:
    """The stored copy of ``server``'s directory, or None if none was ever saved."""
    text = db.value("SELECT files FROM mcp_state WHERE server = ?", (server,))
    return json.loads(text) if text is not None else None


def save(db: Conn, server: str, files: Files, owner: str, now: float) -> bool:
    """Store the copy if ``owner`` holds the leader lease now; whether it was stored."""
    with db.transaction() as conn:
        row = conn.execute(
            "SELECT owner, expires_at FROM locks WHERE name = ?", (LEADER_LOCK,)
        ).fetchone()
        if row is None or row[0] != owner or row[1] <= lease.store_time(conn, now):
            return False
        conn.execute(
            "INSERT INTO mcp_state (server, files, owner, updated_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (server) DO UPDATE SET files = excluded.files,"
            " owner = excluded.owner, updated_at = excluded.updated_at",
            (server, json.dumps(files, sort_keys=True), owner, now),
        )
    return True


class StateKeeper:
    """One singleton server's directory on this host and its copy in the store."""

    def __init__(self, store: Any, server: str, directory: Path, owner: Callable[[], str]):
        self.store = store
        self.server = server
        self.directory = directory
        self.owner = owner  # the leadership owner id the saves are fenced with
        self.restored = False  # set by restore(); cleared when the server stops here
        self._saved: Files | None = None

    async def restore(self) -> None:
        """Make the directory the stored copy (if any) before the server starts."""
        files = await self.store.run(lambda db: load(db, self.server))
        if files is not None:
            await asyncio.to_thread(write_dir, self.directory, files)
        else:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._saved = files
        self.restored = True
        logger.info("MCP server %s: state restored (%d files)", self.server, len(files or {}))

    async def save(self, session: Any) -> bool:
        """Copy the directory to the store once the events it accounts for are queued;
        whether a copy was stored (False: unchanged, too big, not leader, or no barrier)."""
        files = await asyncio.to_thread(read_dir, self.directory)
        if files is None or files == self._saved:
            return False
        try:
            async with asyncio.timeout(BARRIER_TIMEOUT):
                await session.ping(timeout=BARRIER_TIMEOUT)
                await session.inbound.drain()
        except Exception as exc:  # a server that does not answer: its position waits
            logger.warning("MCP server %s: state not saved (%s)", self.server, exc)
            return False
        owner = self.owner()
        stored = await self.store.run(lambda db: save(db, self.server, files, owner, time.time()))
        if stored:
            self._saved = files
        return stored

    async def keep(self, session: Any) -> None:
        """Save every :data:`SAVE_INTERVAL` while the server runs (cancelled when it stops)."""
        while True:
            await asyncio.sleep(SAVE_INTERVAL)
            try:
                await self.save(session)
            except Exception:  # boundary: the next interval tries again
                logger.exception("saving the state of MCP server %s failed", self.server)
