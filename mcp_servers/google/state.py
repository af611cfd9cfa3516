"""A watcher's position on disk: one small JSON file next to the server's token file.

Written atomically (temporary file + rename) after every change that matters, so a crash
leaves either the old or the new position and a restart neither misses nor repeats events.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from .auth import write_private

logger = logging.getLogger(__name__)


def state_path(token_file: Path, server: str) -> Path:
    """`google-<server>.state.json` in the token file's directory.

    Named by server, not by token, because one token file may serve both servers.
    """
    return token_file.parent / f"google-{server}.state.json"


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
