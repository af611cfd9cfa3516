"""What the web plugin writes for pages — briefings and messages — reaching the pages of every
host that shares the store.

A page's live stream is held by whichever host it connected to, but the tick leader delivers
the briefings and any host may send a session a message. So delivery writes a row (its table
is the durable record) and publishes a cross-host notice that only says "look"; each host's
:class:`Feed` then reads the rows newer than the last it pushed and puts them on its own
pages. The same read runs when the host's listener came back from a gap (``resync``), so a
row written while notices could not arrive is pushed then. Rows are written under the store's
write lock, so their ids grow in commit order and "newer than the last pushed" misses none.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from bothost.api import HostApi, Notice

BATCH = 100  # rows read per query while catching up
PRUNE_EVERY = 50  # ids between prunes: trimming a table on every insert would double the writes


def append(db: Any, table: str, row: dict[str, Any], keep: int) -> int:
    """Insert ``row`` into a feed table and return its id, keeping about the newest ``keep``.

    ``table`` and the keys of ``row`` are the caller's own names, never a person's input.
    """
    columns = ", ".join(row)
    row_id = int(
        db.value(
            f"INSERT INTO {table} ({columns}) VALUES ({', '.join(':' + c for c in row)})"
            " RETURNING id",
            row,
        )
    )
    if row_id % PRUNE_EVERY == 0:
        db.execute(f"DELETE FROM {table} WHERE id <= ?", (row_id - keep,))
    return row_id


class Feed:
    """One table's new rows, pushed to this host's pages as any host writes them."""

    def __init__(
        self,
        topic: str,
        newest: Callable[[Any], int],
        since: Callable[[Any, int, int], list[dict[str, Any]]],
        push: Callable[[dict[str, Any]], None],
    ) -> None:
        self.topic = topic
        self.newest = newest  # (db) -> the highest id now
        self.since = since  # (db, after id, limit) -> rows in id order
        self.push = push
        self.host: HostApi | None = None
        self.last = 0
        self._look = asyncio.Lock()  # one look at a time, so no row is pushed twice

    async def start(self, host: HostApi) -> None:
        """Push only what is written from now on (pages load the history themselves)."""
        first = self.host is None
        self.host = host
        self.last = await host.store.run(self.newest)
        if first:
            host.crosshost.subscribe(self.topic, self.on_notice, resync=self.look)

    async def publish(self, host: HostApi, write: Callable[[Any], dict[str, Any]]) -> Any:
        """Run ``write(db)`` and tell every host to look; the row ``write`` returns. ``host``
        may be one that never started this feed (``bothost tick`` delivering for the others,
        routes served without the platform started)."""
        row = await host.crosshost.publish(self.topic, {}, write=write)
        if self.host is None:  # bound, not started: nobody here subscribed, push it directly
            self.push(row)
        return row

    async def on_notice(self, notice: Notice) -> None:
        await self.look()

    def reader(self, after: int) -> Callable[[Any], list[dict[str, Any]]]:
        return lambda db: self.since(db, after, BATCH)

    async def look(self) -> None:
        if self.host is None:
            return
        store = self.host.store
        async with self._look:
            while True:
                rows = await store.run(self.reader(self.last))
                for row in rows:
                    self.last = max(self.last, int(row["id"]))
                    self.push(row)
                if len(rows) < BATCH:
                    return
