"""WAL checkpoints of the SQLite store, on a thread of their own.

SQLite in WAL mode appends each commit to the ``-wal`` file; a checkpoint copies those pages
into the database file and syncs it. By default the connection that commits runs one once
the WAL passes 1,000 pages, inside that commit — on the store's one writer thread, where
every job behind it waits the copying and two fsyncs out (measured for issue 19: a burst of
webhook batches spent about half its store-thread wall time so). So the store's connection
has automatic checkpoints off (``PRAGMA wal_autocheckpoint = 0``) and :class:`Checkpointer`
runs them on its own connection: after a write, at most once per :data:`CHECKPOINT_EVERY`,
a PASSIVE checkpoint, which never waits for the writer or readers and never blocks them
(what it cannot copy yet, the next one does). With ``synchronous = NORMAL`` a commit is
durable against a process crash when it is in the WAL; checkpoints do not change that.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

logger = logging.getLogger(__name__)

# Seconds between checkpoints while writes go on: about what SQLite's 1,000-page default
# gives at a few thousand small events per second, so the WAL stays a few megabytes.
CHECKPOINT_EVERY = 1.0


class Checkpointer:
    """A daemon thread that checkpoints ``path``'s WAL after writes (see the module)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.due = threading.Event()  # a write since the last checkpoint
        self.stopping = threading.Event()
        self.checkpoints = 0  # run so far (for tests and the curious)
        self.thread = threading.Thread(target=self._run, name="bothost-checkpoint", daemon=True)
        self.thread.start()

    def wrote(self) -> None:
        """A commit reached the WAL (called on the store thread after a write job)."""
        if not self.due.is_set():
            self.due.set()

    def _run(self) -> None:
        try:
            raw = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error:
            logger.exception(
                "WAL checkpoints: cannot open %s; the WAL grows until restart", self.path
            )
            return
        try:
            while not self.stopping.is_set():
                self.due.wait()
                self.due.clear()
                if self.stopping.is_set():
                    break
                try:
                    raw.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    self.checkpoints += 1
                except sqlite3.Error:  # a full disk, say: the writer sees it too; try later
                    logger.exception("WAL checkpoint of %s failed", self.path)
                self.stopping.wait(CHECKPOINT_EVERY)  # at most one per interval
        finally:
            raw.close()

    def stop(self) -> None:
        """End the thread (before the store's connection closes, which checkpoints last)."""
        self.stopping.set()
        self.due.set()
        self.thread.join(timeout=10)
