"""Whether an MCP server is one of the servers bothost ships, run from this installation.

Only those may state their tools' capabilities exactly (``_meta["bothost/capabilities"]``,
DESIGN: "our bundled servers do"), lowering what their annotations say: ``send`` is not
untrusted, ``exec`` sends only to a configured host. Any other server wrote its ``_meta``
itself and could state a destructive tool harmless, so there it may only add
(:func:`bothost.agent.mcp_tools.capabilities`). A server is bundled by what runs, not by its
name: the ``bothost-mcp-*`` script beside this interpreter, or this interpreter with ``-m
bothost.mcp_servers.<name>``. A script of that name elsewhere on PATH is anybody's.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from bothost.config import McpServerConfig
from bothost.mcp.executables import resolve_command

BUNDLED = ("gmail", "gcal", "weather", "ssh")  # DESIGN: "Bundled MCP servers"
SCRIPTS = {f"bothost-mcp-{name}" for name in BUNDLED}
MODULES = {f"bothost.mcp_servers.{name}" for name in BUNDLED}


def is_bundled(config: McpServerConfig, interpreter: str = sys.executable) -> bool:
    """Whether ``config`` runs a bundled server of the installation ``interpreter`` is of."""
    if config.url or not config.command:
        return False
    found = resolve_command(config.command)
    if found is None:
        return False
    program, home = Path(found), Path(interpreter).parent
    if program.name in SCRIPTS:
        return program.parent == home  # the venv's bin, as installed with bothost
    args = list(config.args)
    return (
        same_file(program, Path(interpreter))
        and args[:1] == ["-m"]
        and len(args) > 1
        and args[1] in MODULES
    )


def same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
