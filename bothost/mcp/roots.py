"""The roots a server is told about: the directories its config names, as ``file://`` URIs.

MCP roots tell a server which parts of the filesystem it should work in. A server's roots
come from ``mcp.servers.<name>.roots`` — absolute paths, ``~`` allowed — and are checked at
load (:func:`check_roots`, which the host registers with the config's loader) and when a
server is added at run time (:func:`problem`); a directory need not exist yet (a mount may
come later), so it is not checked. A server with no roots gets an empty list, as before
roots were configurable. The list is fixed for a connection's life: config is read once, and a
changed server entry restarts the server, so the client never needs
``notifications/roots/list_changed``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bothost.config.check import source_of
from bothost.config.schema import ConfigError

if TYPE_CHECKING:
    from bothost.config import Config


def expanded(path: str) -> Path:
    return Path(path).expanduser()


def problem(path: str) -> str | None:
    """What is wrong with `path` as a root, or None."""
    if not path.strip() or not expanded(path).is_absolute():
        return f"expected an absolute path (or one starting with ~), got {path!r}"
    return None


def check_roots(config: Config) -> None:
    """Refuse a configured root that is not an absolute path, naming file and key path."""
    for name, server in config.mcp.servers.items():
        for i, root in enumerate(server.roots):
            wrong = problem(root)
            if wrong:
                where = source_of(config, "mcp", "servers", name)
                raise ConfigError(f"{where}: mcp.servers.{name}.roots[{i}]: {wrong}")


def as_roots(paths: list[str]) -> list[dict[str, str]]:
    """The ``roots/list`` answer for these paths: each one's URI and its last name."""
    out = []
    for path in paths:
        full = Path(str(expanded(path)).rstrip("/") or "/")
        out.append({"uri": full.as_uri(), "name": full.name or str(full)})
    return out
