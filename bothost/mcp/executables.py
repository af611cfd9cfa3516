"""Finding the programs the host runs (MCP server commands) even outside an activated venv.

``make run`` starts ``.venv/bin/bothost`` without activating the venv, so the bundled
``bothost-mcp-*`` scripts are not on PATH; they sit next to the running interpreter.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def resolve_command(command: str) -> str | None:
    """Absolute path of ``command``: PATH first, then the interpreter's own bin directory."""
    if os.sep in command:
        return command if os.access(command, os.X_OK) else None
    found = shutil.which(command)
    if found:
        return found
    beside = Path(sys.executable).parent / command
    return str(beside) if beside.exists() and os.access(beside, os.X_OK) else None
