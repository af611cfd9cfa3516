"""Flood control for what an MCP server sends unasked: a budget, and a count of the rest.

A server may send without end — log messages, stderr lines, notifications, requests. What
is within a :class:`Budget` (a token bucket: a burst at once, then a rate) is handled;
what is beyond is dropped and counted in a :class:`Tally`, which says the counts in the
log at once and then at most every :data:`DROP_LOG_EVERY` seconds, so the flood writes a
line now and then, not one per message. :mod:`bothost.mcp.inbound` (notifications and
server requests) and :mod:`bothost.mcp.stdio` (stderr) both use them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

DROP_LOG_EVERY = 10.0  # a flood's drops are logged at most this often, with their count
# A server's log lines (notifications/message, and stderr, which costs the same) written to
# its log: ~80 µs of CPU each (formatting, redaction, the rotating file: measured 82 µs at
# load 10), so 200 a second are under 2 % of a core, more than a server logs in normal use,
# and a burst of 1,000 (a start's or an error's worth) is written whole.
LOG_RATE = 200.0
LOG_BURST = 1_000


class Tally:
    """Counts what a flood made us drop or ignore; logs the first, then at most every
    :data:`DROP_LOG_EVERY` seconds of ``clock``."""

    def __init__(
        self,
        log: logging.Logger,
        clock: Callable[[], float],
        level: int = logging.WARNING,
        label: str = "flood control",
    ) -> None:
        self.log = log
        self.clock = clock
        self.level = level
        self.label = label
        self.counts: dict[str, int] = {}
        self._logged = float("-inf")

    def add(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1
        now = self.clock()
        if now - self._logged >= DROP_LOG_EVERY:
            self._logged = now
            summary = ", ".join(f"{n} × {w}" for w, n in sorted(self.counts.items()))
            self.log.log(self.level, "%s: %s (since the last such line)", self.label, summary)
            self.counts.clear()


class Budget:
    """A token bucket: up to ``burst`` at once, then ``rate`` a second, on ``clock``."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float]) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.clock = clock
        self._tokens = self.burst
        self._at = clock()

    def take(self) -> bool:
        """One more within the budget? (False: over it; nothing is taken.)"""
        now = self.clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True
