"""Building a host for a test: a config file in a temp dir, the real plugin loading."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path
from typing import Any

import yaml

from bothost.config import load
from bothost.discovery import load_plugins, new_plugin_manager
from bothost.host import Host

QUIET = {
    "platforms": {"web": {"port": 0}, "console": {"enabled": False}},
    "mcp": {"servers": {"weather": {"enabled": False}}},
}


def deep(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = deep(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def write_config(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(deep(QUIET, data)))
    return path


def make_host(home: Path, data: dict[str, Any] | None = None) -> Host:
    config_file = write_config(home.parent / "test-config.yaml", data or {})
    config = load(config_file, home)
    pm = new_plugin_manager()
    load_plugins(pm, config.plugins.dirs, config.plugins.disabled)
    return Host(config, home, pm)


async def until(predicate, timeout: float = 10.0) -> None:
    """Wait (bounded) until ``predicate()`` holds, polling briefly."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for servers that need a number)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def bothost_process(
    home: Path, config: Path, *args: str, stdout: int = asyncio.subprocess.PIPE, **env: str
) -> asyncio.subprocess.Process:
    """``python -m bothost --config CONFIG ARGS`` with ``home`` as its home, as a person
    starts it (no stdin; stderr piped), ``env`` added to this process's environment."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bothost",
        "--config",
        str(config),
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=stdout,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "BOTHOST_HOME": str(home), **env},
    )
