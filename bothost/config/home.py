"""The home directory: ``bothost.db``, ``logs/``, ``media/``, ``spill/``, ``secrets/``.

Everything in it is private to the user: directories are created 0700 (files 0600 by the
code that writes them), because logs, spilled tool output and secrets may hold private data.
A home that cannot be created or made private is a :class:`HomeError` naming the directory.
"""

from __future__ import annotations

from pathlib import Path

SUBDIRS = ("logs", "media", "spill", "secrets", "state")


class HomeError(Exception):
    """The home directory cannot be created or written; the message names it."""


def ensure_home(home: Path) -> Path:
    home = Path(home).expanduser().resolve()
    existed = home.is_dir()
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        home.chmod(0o700)
        for name in SUBDIRS:
            (home / name).mkdir(mode=0o700, exist_ok=True)
    except OSError as exc:
        problem = "not writable" if existed else "cannot be created"
        raise HomeError(
            f"{home}: {problem} ({exc.strerror or exc}: {exc.filename}); "
            "fix its permissions or choose another --home / BOTHOST_HOME"
        ) from exc
    return home
