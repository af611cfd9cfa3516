"""What ``store.url`` names: a SQLite file (the default, in the home) or a PostgreSQL URL.

``postgresql://…`` (or ``postgres://…``, libpq's URL with its query options) selects
PostgreSQL; ``sqlite:///absolute/path``, ``sqlite:relative/path`` or a plain path select
another SQLite file (relative to the home); unset, the home's ``bothost.db``.
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_FILE = "bothost.db"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class TargetError(ValueError):
    """``store.url`` names nothing the store can open; the message says what is expected."""


def store_target(url: str | None, home: Path) -> Path | str:
    """A SQLite file's path, or the PostgreSQL URL as given."""
    if not url:
        return home / DEFAULT_FILE
    if url.startswith(POSTGRES_SCHEMES):
        return url
    if url.startswith("sqlite:"):
        path = url.removeprefix("sqlite:")
        path = "/" + path.lstrip("/") if path.startswith("///") else path.removeprefix("//")
        if not path:
            raise TargetError("expected a file after 'sqlite:' (sqlite:///path/to/bothost.db)")
        return home / Path(path).expanduser()
    if "://" in url:
        scheme = url.split("://", 1)[0]
        raise TargetError(
            f"unknown scheme {scheme!r}; expected postgresql://…, sqlite:///path or a file path"
        )
    return home / Path(url).expanduser()
