"""The home directory: ``bothost.db``, ``logs/``, ``media/``, ``spill/``, ``secrets/``.

Everything in it is private to the user: directories are created 0700 (files 0600 by the
code that writes them), because logs, spilled tool output and secrets may hold private data.
"""

from __future__ import annotations

from pathlib import Path

SUBDIRS = ("logs", "media", "spill", "secrets", "state")


def ensure_home(home: Path) -> Path:
    home = Path(home).expanduser().resolve()
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    home.chmod(0o700)
    for name in SUBDIRS:
        (home / name).mkdir(mode=0o700, exist_ok=True)
    return home
