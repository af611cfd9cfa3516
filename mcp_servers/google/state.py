"""A watcher's position on disk: one small JSON file next to the server's token file.

Written atomically (temporary file + rename) after every change that matters, so a crash
leaves either the old or the new position and a restart neither misses nor repeats events.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any

from ..kit.server import HOST_STATE_DIR
from .auth import write_private

logger = logging.getLogger(__name__)


def state_path(token_file: Path, server: str) -> Path:
    """`google-<server>.state.json` in the token file's directory, or in
    `$BOTHOST_STATE_DIR` when a host set it (it carries that directory to the next leader
    host; a position left next to the token file is moved there the first time).

    Named by server, not by token, because one token file may serve both servers.
    """
    name = f"google-{server}.state.json"
    beside_token = token_file.parent / name
    host_dir = os.environ.get(HOST_STATE_DIR)
    if not host_dir:
        return beside_token
    path = Path(host_dir).expanduser() / name
    if not path.exists() and beside_token.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        shutil.copyfile(beside_token, path)
    return path


class StateFile:
    """Load and save one JSON object."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            logger.exception("unreadable watcher state %s; starting afresh", self.path)
            return {}
        return data if isinstance(data, dict) else {}

    def save(self, data: dict[str, Any]) -> None:
        write_private(self.path, json.dumps(data, separators=(",", ":")))
