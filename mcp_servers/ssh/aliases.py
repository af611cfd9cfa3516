"""Named ssh targets ("aliases") and the JSON file that keeps them.

An alias says where and how to connect (host, port, user, auth method, key file path,
sudo method, host-key policy) and what to monitor; it never holds a secret: passwords are
asked for at connect time and live only in RAM (`passwords`). The file is rewritten
atomically (temp file in the same directory, fsync, rename) with mode 0600, and re-read on
every access, so an edit by hand or by a second process is picked up without a restart.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import SshError

FILE_VERSION = 1
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
AUTH_METHODS = ("key", "agent", "password")
SUDO_METHODS = ("nopasswd", "prompt", "none")
# Keys that would mean a secret is being stored; refused even when hand-edited into the file.
SECRET_KEYS = {"password", "passphrase", "sudo_password", "secret", "private_key"}


@dataclass
class Monitors:
    """What the background monitor checks on one alias (nothing by default)."""

    disk_percent: int | None = None
    disk_paths: list[str] = field(default_factory=lambda: ["/"])
    failed_units: bool = False
    unreachable: bool = False

    @property
    def enabled(self) -> bool:
        return self.disk_percent is not None or self.failed_units or self.unreachable


@dataclass
class Alias:
    """One ssh target; see the module docstring for what is (not) stored."""

    name: str
    host: str
    user: str
    port: int = 22
    auth: str = "key"
    key_file: str | None = None
    sudo: str = "nopasswd"
    accept_new_host_key: bool = False
    description: str = ""
    monitors: Monitors = field(default_factory=Monitors)

    @property
    def target(self) -> str:
        """`user@host:port`, for messages."""
        return f"{self.user}@{self.host}:{self.port}"

    def public(self) -> dict[str, Any]:
        """The alias as shown to the model and written to the file."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Alias:
        data = dict(data)
        secrets = SECRET_KEYS & set(data)
        if secrets:
            raise SshError(
                f"alias {data.get('name')!r}: secrets are not stored ({sorted(secrets)})"
            )
        monitors = data.pop("monitors", None) or {}
        try:
            alias = cls(**data, monitors=Monitors(**monitors))
        except TypeError as exc:
            raise SshError(f"alias {data.get('name')!r}: {exc}") from None
        alias.validate()
        return alias

    def validate(self) -> None:
        """Raise `SshError` naming the first field that is wrong."""
        problems = []
        if not NAME_PATTERN.match(self.name or ""):
            problems.append("name must be 1-64 of letters, digits, '_', '.', '-'")
        if not self.host or any(c.isspace() for c in self.host) or self.host.startswith("-"):
            problems.append("host must be a host name or address")
        if not self.user or any(c.isspace() for c in self.user) or self.user.startswith("-"):
            problems.append("user must be a login name")
        if not isinstance(self.port, int) or not 0 < self.port < 65536:
            problems.append("port must be 1-65535")
        if self.auth not in AUTH_METHODS:
            problems.append(f"auth must be one of {', '.join(AUTH_METHODS)}")
        if self.sudo not in SUDO_METHODS:
            problems.append(f"sudo must be one of {', '.join(SUDO_METHODS)}")
        percent = self.monitors.disk_percent
        if percent is not None and not 0 <= percent <= 100:
            problems.append("monitors.disk_percent must be 0-100")
        if not all(isinstance(p, str) and p.startswith("/") for p in self.monitors.disk_paths):
            problems.append("monitors.disk_paths must be absolute paths")
        if problems:
            raise SshError(f"alias {self.name!r}: " + "; ".join(problems))


class AliasStore:
    """The aliases file: load, save atomically with mode 0600, add, remove."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, Alias]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SshError(f"cannot read aliases file {self.path}: {exc}") from None
        entries = data.get("aliases", {}) if isinstance(data, dict) else None
        if not isinstance(entries, dict):
            raise SshError(f"aliases file {self.path}: expected {{'aliases': {{name: {{…}}}}}}")
        return {name: Alias.from_dict({**entry, "name": name}) for name, entry in entries.items()}

    def get(self, name: str) -> Alias:
        aliases = self.load()
        if name not in aliases:
            known = ", ".join(sorted(aliases)) or "none yet; use add_alias"
            raise SshError(f"unknown alias {name!r} (aliases: {known})")
        return aliases[name]

    def add(self, alias: Alias, replace: bool = False) -> None:
        alias.validate()
        aliases = self.load()
        if alias.name in aliases and not replace:
            raise SshError(f"alias {alias.name!r} exists; pass replace=true to overwrite it")
        aliases[alias.name] = alias
        self.save(aliases)

    def remove(self, name: str) -> Alias:
        aliases = self.load()
        alias = aliases.pop(name, None)
        if alias is None:
            raise SshError(f"unknown alias {name!r}")
        self.save(aliases)
        return alias

    def save(self, aliases: dict[str, Alias]) -> None:
        entries = {}
        for name, alias in sorted(aliases.items()):
            entry = alias.public()
            del entry["name"]
            entries[name] = entry
        write_private_json(self.path, {"version": FILE_VERSION, "aliases": entries})


def write_private_json(path: Path, data: Any) -> None:
    """Replace `path` with `data` as JSON, atomically, readable by the owner only."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
