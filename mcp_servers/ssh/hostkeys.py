"""Host-key checking against a known_hosts file, OpenSSH style.

A known key must match (a changed key is always refused: that is what a man in the middle
looks like). An unknown key is refused, unless the alias was added with
`accept_new_host_key`, in which case it is trusted on first use and appended to the file
(like `StrictHostKeyChecking=accept-new`); from then on it is an ordinary known key.
Appending, rather than letting paramiko rewrite the file, keeps the user's comments,
markers and hashed entries intact.
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
from pathlib import Path

from .errors import HostKeyError
from .sshlib import paramiko

_APPEND_LOCK = threading.Lock()


def fingerprint(key: paramiko.PKey) -> str:
    """`SHA256:…`, as `ssh-keygen -l` prints it."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def host_entry(host: str, port: int) -> str:
    """The known_hosts name of a host: `[host]:port` unless the port is 22."""
    return host if port == 22 else f"[{host}]:{port}"


class KnownHostsPolicy(paramiko.MissingHostKeyPolicy):
    """What to do with a host key known_hosts does not list."""

    def __init__(self, known_hosts: Path, accept_new: bool) -> None:
        self.known_hosts = known_hosts
        self.accept_new = accept_new

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey):
        if not self.accept_new:
            raise HostKeyError(
                f"unknown host key for {hostname} ({key.get_name()} {fingerprint(key)}): "
                f"not in {self.known_hosts}. Add it to that file after checking the "
                "fingerprint, or re-add the alias with accept_new_host_key=true"
            )
        append_key(self.known_hosts, hostname, key)
        client.get_host_keys().add(hostname, key.get_name(), key)


def append_key(known_hosts: Path, hostname: str, key: paramiko.PKey) -> None:
    """Add one `hostname keytype base64` line to known_hosts (created 0600 if missing)."""
    with _APPEND_LOCK:
        known_hosts.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(known_hosts, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="ascii") as handle:
            if handle.tell() > 0 and not _ends_with_newline(known_hosts):
                handle.write("\n")
            handle.write(f"{hostname} {key.get_name()} {key.get_base64()}\n")


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


def load_into(client: paramiko.SSHClient, known_hosts: Path) -> None:
    """Give `client` the keys of `known_hosts` without making paramiko own the file."""
    if known_hosts.exists():
        client.get_host_keys().load(str(known_hosts))
