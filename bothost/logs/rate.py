"""Rate-limited warnings: one line per key (a source) and minute, with a count of the rest.

A warning that an outsider can repeat at will — an MCP server's refused events, a webhook
sender's, a server's garbage lines — was written once per occurrence: one server sending
``event/\\ud800`` at full rate wrote 228,713 lines (49.6 MB of stderr) in 30 s and doubled
the host's memory. :class:`RateLimitedLog` writes the first occurrence per key at once, then
at most one line per ``interval``; the line after a quiet spell says how many like it were
left out since the line before. The count of a flood's last minute comes with the next
occurrence, as nothing here runs a timer. The keys kept are bounded: past ``max_keys`` new
keys share one line (a sender choosing a new source name each time cannot grow the table).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

INTERVAL = 60.0  # seconds between two lines of one key: a minute, as operations.md says
MAX_KEYS = 1024  # keys tracked at once; many more sources than a host has
OTHERS = "\0others"  # the key the keys past MAX_KEYS share (no source is called that)


class RateLimitedLog:
    """One logger's repeated warnings, at most one line per key and ``interval`` seconds.

    Thread-safe: the event queue refuses events on the store thread and the loop alike.
    """

    def __init__(
        self,
        logger: logging.Logger,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = MAX_KEYS,
    ) -> None:
        self.logger, self.interval, self.clock, self.max_keys = logger, interval, clock, max_keys
        self._lock = threading.Lock()
        # key → (when its next line may be written, occurrences left out since its last)
        self._last: dict[str, tuple[float, int]] = {}

    def warning(self, key: str, msg: str, *args: Any) -> bool:
        """:meth:`log` at WARNING."""
        return self.log(logging.WARNING, key, msg, *args)

    def info(self, key: str, msg: str, *args: Any) -> bool:
        """:meth:`log` at INFO."""
        return self.log(logging.INFO, key, msg, *args)

    def log(self, level: int, key: str, msg: str, *args: Any) -> bool:
        """Log ``msg % args`` unless a line of ``key`` was written within the interval;
        whether it was written. A line after left-out ones names their count."""
        if not self.logger.isEnabledFor(level):
            return False
        with self._lock:
            now = self.clock()
            key = self._slot(key, now)
            due, left_out = self._last.get(key, (now, 0))
            if now < due:
                self._last[key] = (due, left_out + 1)
                return False
            self._last[key] = (now + self.interval, 0)
        if left_out:
            if not args:  # without arguments the message is not %-formatted: keep its "%"
                msg = msg.replace("%", "%%")
            msg += " (and %s more like it since the last such line)"
            args = (*args, f"{left_out:,}")
        self.logger.log(level, msg, *args)
        return True

    def _slot(self, key: str, now: float) -> str:
        """``key``, or the shared one when the table is full (after forgetting the keys whose
        interval is over and that left nothing out: their next line is due anyway)."""
        if key in self._last or len(self._last) < self.max_keys:
            return key
        for old, (due, left_out) in list(self._last.items()):
            if due <= now and not left_out:
                del self._last[old]
        return key if len(self._last) < self.max_keys else OTHERS
