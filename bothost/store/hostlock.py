"""One serving host per SQLite file: an OS lock on a file beside the database.

On SQLite the one host always leads (:mod:`bothost.crosshost.leadership`): it runs the
singleton servers and ticks on its timetable. A second ``bothost run`` on the same file
would lead as well — two watchers pushing, two timetables — so it is refused at start with
one line naming the holder. The lock is ``flock(2)`` on ``<database>.host.lock``, not a row
in ``locks``: a row would outlive a SIGKILLed holder until it expired, while the kernel
drops an flock the moment its process dies, however it died. Commands (``bothost tick``,
``events list``, ``chat``) do not take it and keep sharing the file. PostgreSQL needs none:
its hosts share leadership through the lease.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

SUFFIX = ".host.lock"


class HostLockedError(Exception):
    """Another process already serves this SQLite file; the message names it."""


class HostLock:
    """The hold of one serving host on its SQLite file: ``acquire()``, then ``release()``."""

    def __init__(self, database: Path) -> None:
        self.database = database
        self.path = database.with_name(database.name + SUFFIX)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Hold the file, or raise :class:`HostLockedError` at once (never wait)."""
        if self._fd is not None:
            return
        # O_CLOEXEC: an MCP server this host starts must not inherit (and so keep) the hold
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise HostLockedError(
                f"{self.database}: another bothost run (pid {holder}) already serves this"
                " SQLite file, and one SQLite file takes one host; stop that one first, or give"
                " several hosts one PostgreSQL database (store.url)"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Let the next host start (closing the file drops the lock)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def is_served(database: Path) -> bool:
    """Whether a ``bothost run`` holds ``database`` now (for ``bothost doctor``: a bothost
    answering on the configured port is this database's host only if one does). The test
    takes and drops a shared hold at once; it never creates the lock file."""
    try:
        fd = os.open(database.with_name(database.name + SUFFIX), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:  # no lock file: no host ever served it (or it cannot be read: unknown)
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops a hold we took
    return False
