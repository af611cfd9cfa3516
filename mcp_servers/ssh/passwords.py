"""Passwords the user typed (login and sudo), held in this process's memory for a while.

They are never written to disk, logged, or put into a tool result: this is the only place
that holds them, keyed by (kind, alias), and each expires after a TTL so a forgotten session
does not keep root's password around. Python cannot wipe a `str`, so expiry drops the last
reference and leaves the rest to the garbage collector.
"""

from __future__ import annotations

import time
from collections.abc import Callable

DEFAULT_TTL_SECONDS = 900.0  # long enough for a work session, short enough to lapse overnight

LOGIN = "login"
SUDO = "sudo"


class PasswordCache:
    """(kind, alias) -> password, forgotten after `ttl` seconds."""

    def __init__(
        self, ttl: float = DEFAULT_TTL_SECONDS, clock: Callable[[], float] = time.monotonic
    ):
        self.ttl = ttl
        self._clock = clock
        self._entries: dict[tuple[str, str], tuple[str, float]] = {}

    def get(self, kind: str, alias: str) -> str | None:
        entry = self._entries.get((kind, alias))
        if entry is None:
            return None
        password, expires = entry
        if self._clock() >= expires:
            del self._entries[(kind, alias)]
            return None
        return password

    def put(self, kind: str, alias: str, password: str) -> None:
        if self.ttl > 0:
            self._entries[(kind, alias)] = (password, self._clock() + self.ttl)

    def forget(self, kind: str, alias: str) -> None:
        self._entries.pop((kind, alias), None)

    def forget_alias(self, alias: str) -> None:
        for key in [k for k in self._entries if k[1] == alias]:
            del self._entries[key]

    def __repr__(self) -> str:  # never show the values, even in a debugger or a traceback
        return f"<PasswordCache {len(self._entries)} entries>"
