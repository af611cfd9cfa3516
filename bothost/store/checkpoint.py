"""WAL checkpoints of the SQLite store, on a thread of their own, and the WAL's bound.

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

Copying is not enough: SQLite starts the WAL over from its beginning only when a write
transaction *starts* after a checkpoint has copied every frame. A commit whose transaction
began before a checkpoint ended (the writer never waits for one) leaves frames uncopied, so
the next write appends again; under a steady stream of writes the thread's checkpoint lost
that race nearly every time and the WAL grew by every write while the checkpoints grew the
database file too — after a full disk the space freed was used twice over and ``/healthz``
stayed 503 (issue 19). Hence:

* the thread checkpoints again at once while writes landed during its pass
  (:data:`CATCH_UP_PASSES`), so a quiet moment usually finds the WAL fully copied, and it
  runs at once rather than at the end of its interval when the WAL passes
  :data:`WAL_HURRY_BYTES`;
* :class:`WalBound`, on the store thread after a write job: once the WAL file passes
  :data:`WAL_BOUND_BYTES`, the writer itself runs a PASSIVE checkpoint. Nothing can commit
  between it and the writer's next transaction, which therefore starts the WAL over; it
  copies only what the thread has not copied yet;
* the store's ``journal_size_limit`` cuts the file back to :data:`WAL_HURRY_BYTES` when it
  starts over, so a WAL that grew in a burst gives its space back.

When even the writer cannot copy everything — a reader (a backup, another process) holds an
old snapshot, or the disk is full — the WAL grows; :class:`WalBound` logs a warning at most
once per :data:`WARN_EVERY` and keeps the reason (``stuck``) for ``/healthz``'s
``store.wal``, beside ``store.wal_bytes``; writes still work, so the store stays ``ok``.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger(__name__)

# Seconds between checkpoints while writes go on: about what SQLite's 1,000-page default
# gives at a few thousand small events per second, so the WAL stays a few megabytes.
CHECKPOINT_EVERY = 1.0
# Passes in a row while writes land during each: each copies only what the one before could
# not, so they shorten quickly; past this the writer's bound takes over.
CATCH_UP_PASSES = 4
# The WAL file's size past which the thread checkpoints at once instead of at the end of its
# interval, and the size the file is cut back to when it starts over (journal_size_limit):
# 1 MB is a fraction of a second of a webhook burst and what /healthz asks to be free
# (health.MIN_FREE_BYTES), so a WAL that grew in a burst gives its space back.
WAL_HURRY_BYTES = 1024 * 1024
# The WAL file's size past which the writer checkpoints itself: SQLite's own default trigger
# (1,000 pages of 4 kB), so the writer never copies more often than SQLite itself would, and
# by then the thread has copied all but its last pass's worth.
WAL_BOUND_BYTES = 4096 * 1000
WARN_EVERY = 60.0  # seconds between warnings that the WAL cannot be reset: a line, not a flood


def wal_path(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def wal_bytes(path: Path) -> int:
    """The size of ``path``'s WAL file now (0 when there is none)."""
    try:
        return wal_path(path).stat().st_size
    except OSError:
        return 0


class Checkpointer:
    """A daemon thread that checkpoints ``path``'s WAL after writes (see the module)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.due = threading.Event()  # a write since the last checkpoint
        self.wake = threading.Event()  # ends the interval's wait: the WAL is large, or stop
        self.stopping = threading.Event()
        self.checkpoints = 0  # passes run so far (for tests and the curious)
        self.thread = threading.Thread(target=self._run, name="bothost-checkpoint", daemon=True)
        self.thread.start()

    def wrote(self, wal_size: int) -> None:
        """A commit reached the WAL, now ``wal_size`` bytes (store thread, after a write)."""
        if not self.due.is_set():
            self.due.set()
        if wal_size > WAL_HURRY_BYTES and not self.wake.is_set():
            self.wake.set()

    def _run(self) -> None:
        try:
            raw = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error:
            logger.exception(
                "WAL checkpoints: cannot open %s; only the writer's bound checkpoints",
                self.path,
            )
            return
        try:
            while not self.stopping.is_set():
                self.due.wait()
                if self.stopping.is_set():
                    break
                self.catch_up(raw)
                self.wake.wait(CHECKPOINT_EVERY)  # one round per interval, unless hurried
                self.wake.clear()
        finally:
            raw.close()

    def catch_up(self, raw: sqlite3.Connection) -> None:
        """PASSIVE passes until one ends with no write reported during it (or the limit)."""
        for _ in range(CATCH_UP_PASSES):
            self.due.clear()
            try:
                raw.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                self.checkpoints += 1
            except sqlite3.Error as exc:  # a full disk, say: the writer sees it too; try later
                logger.warning("WAL checkpoint of %s failed: %s", self.path, exc)
                return
            if not self.due.is_set() or self.stopping.is_set():
                return

    def stop(self) -> None:
        """End the thread (before the store's connection closes, which checkpoints last)."""
        self.stopping.set()
        self.due.set()
        self.wake.set()
        self.thread.join(timeout=10)


class WalBound:
    """On the store thread: start the WAL over once it passes :data:`WAL_BOUND_BYTES`."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self.clock = clock
        self.stuck: str | None = None  # why the WAL cannot be reset, while it cannot
        self.warned_at: float | None = None
        self.checkpoints = 0  # run by the writer so far (for tests and the curious)

    def wrote(self, raw: sqlite3.Connection, size: int) -> None:
        """After a write job, the WAL ``size`` bytes (store thread). Never raises: the job
        has committed."""
        if size <= WAL_BOUND_BYTES:
            self.stuck = None
            return
        try:
            _, frames, copied = raw.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error as exc:  # a full disk: the WAL cannot be copied out
            self.cannot_reset(size, f"a checkpoint failed: {exc}")
            return
        self.checkpoints += 1
        if frames < 0:  # the thread holds the checkpoint lock: it is copying right now
            return
        if copied < frames:
            self.cannot_reset(
                size,
                f"{frames - copied} of its {frames} frames are held by a reader's older"
                " snapshot (a long read, a backup or another process)",
            )
        else:
            self.stuck = None  # the writer's next transaction starts the WAL over

    def cannot_reset(self, size: int, reason: str) -> None:
        self.stuck = reason
        now = self.clock()
        if self.warned_at is None or now - self.warned_at >= WARN_EVERY:
            self.warned_at = now
            logger.warning(
                "the WAL of %s is %.1f MB and cannot be reset: %s; it grows until that ends",
                self.path,
                size / 1e6,
                reason,
            )
