"""One pooled paramiko connection per alias, reused until it has been idle for a TTL.

paramiko is blocking, so everything here is called from worker threads (the tool layer
uses `asyncio.to_thread` with a deadline); a per-alias lock makes two calls on the same
alias share one connection instead of racing to open two. A pooled connection is
dropped when its transport died, when it has been idle longer than the TTL, or when the
alias changed (the pool remembers what it connected with). Passwords are passed in by
the caller and never kept here.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .aliases import Alias
from .errors import HostKeyError, SshError, wrap
from .sshlib import paramiko

logger = logging.getLogger(__name__)

DEFAULT_IDLE_TTL = (
    300.0  # seconds; reconnecting costs ~100 ms, an idle session costs the host a process
)
DEFAULT_CONNECT_TIMEOUT = 10.0  # TCP connect, banner and auth each; a dead host should fail fast


@dataclass
class _Pooled:
    client: paramiko.SSHClient
    alias: Alias
    last_used: float


class ConnectionPool:
    """Connections by alias name; see the module docstring."""

    def __init__(
        self,
        known_hosts: Path,
        idle_ttl: float = DEFAULT_IDLE_TTL,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    ) -> None:
        self.known_hosts = known_hosts
        self.idle_ttl = idle_ttl
        self.connect_timeout = connect_timeout
        self._pool: dict[str, _Pooled] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def _lock(self, name: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(name, threading.Lock())

    def live(self, alias: Alias) -> bool:
        """Whether a usable pooled connection exists (so no password is needed now)."""
        with self._guard:
            entry = self._pool.get(alias.name)
        return entry is not None and self._usable(entry, alias)

    def client(self, alias: Alias, password: str | None = None) -> paramiko.SSHClient:
        """The pooled connection for `alias`, opening one if needed (blocking)."""
        with self._lock(alias.name):
            with self._guard:
                entry = self._pool.get(alias.name)
            if entry is not None and self._usable(entry, alias):
                entry.last_used = time.monotonic()
                return entry.client
            if entry is not None:
                self.drop(alias.name)
            client = self._connect(alias, password)
            with self._guard:
                self._pool[alias.name] = _Pooled(client, alias, time.monotonic())
            return client

    def _usable(self, entry: _Pooled, alias: Alias) -> bool:
        transport = entry.client.get_transport()
        return (
            transport is not None
            and transport.is_active()
            and entry.alias == alias
            and time.monotonic() - entry.last_used < self.idle_ttl
        )

    def _connect(self, alias: Alias, password: str | None) -> paramiko.SSHClient:
        if alias.auth == "password" and password is None:
            raise SshError(f"alias {alias.name!r} needs a password to connect")
        # Here, not at the top: its policy class subclasses a paramiko class, which would
        # import paramiko at start-up (see sshlib).
        from . import hostkeys

        client = paramiko.SSHClient()
        hostkeys.load_into(client, self.known_hosts)
        client.set_missing_host_key_policy(
            hostkeys.KnownHostsPolicy(self.known_hosts, alias.accept_new_host_key)
        )
        options: dict = {
            "hostname": alias.host,
            "port": alias.port,
            "username": alias.user,
            "timeout": self.connect_timeout,
            "banner_timeout": self.connect_timeout,
            "auth_timeout": self.connect_timeout,
            "channel_timeout": self.connect_timeout,
        }
        if alias.auth == "password":
            options.update(password=password, allow_agent=False, look_for_keys=False)
        elif alias.auth == "agent":
            options.update(allow_agent=True, look_for_keys=False)
        else:
            key_file = str(Path(alias.key_file).expanduser()) if alias.key_file else None
            options.update(key_filename=key_file, allow_agent=True, look_for_keys=key_file is None)
        try:
            client.connect(**options)
        except paramiko.BadHostKeyException as exc:
            client.close()
            raise HostKeyError(
                f"HOST KEY CHANGED for {alias.host}:{alias.port} (now {exc.key.get_name()} "
                f"{hostkeys.fingerprint(exc.key)}); refusing to connect. If the change is "
                f"expected, remove the old entry from {self.known_hosts}"
            ) from None
        except Exception as exc:  # boundary: every connect failure becomes one readable line
            client.close()
            raise wrap(exc, alias.target) from None
        transport = client.get_transport()
        if transport is not None:
            transport.set_keepalive(int(self.connect_timeout * 3))
        logger.info("connected to %s (alias %s)", alias.target, alias.name)
        return client

    def drop(self, name: str) -> None:
        """Close and forget the connection of alias `name`, if any."""
        with self._guard:
            entry = self._pool.pop(name, None)
        if entry is not None:
            entry.client.close()

    def reap(self) -> None:
        """Close connections idle longer than the TTL."""
        now = time.monotonic()
        with self._guard:
            stale = [n for n, e in self._pool.items() if now - e.last_used >= self.idle_ttl]
        for name in stale:
            self.drop(name)

    def close_all(self) -> None:
        with self._guard:
            names = list(self._pool)
        for name in names:
            self.drop(name)
