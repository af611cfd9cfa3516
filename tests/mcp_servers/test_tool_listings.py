"""Each bundled server's `tools/list` answer, exactly as a client reads it off stdio.

The snapshot (`tool_listings.json`) was recorded before the servers' tool declarations
were unified on one style, so the refactor provably kept every tool's name, description,
schemas, annotations and capabilities. A deliberate change to a tool re-records it:
`python tests/mcp_servers/test_tool_listings.py --record`.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import initialize_params

SNAPSHOT = Path(__file__).with_name("tool_listings.json")
SERVERS = ("weather", "gmail", "gcal", "ssh")
ROOT = Path(__file__).resolve().parents[2]
# Starting a server process (Python, imports, handshake) on a loaded machine.
DEADLINE_SECONDS = 30.0


async def list_tools(name: str, home: Path) -> list[dict[str, Any]]:
    """Start `python -m bothost.mcp_servers.<name>`, do the handshake, return `tools/list`."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "BOTHOST_HOME": str(home),
        "HOME": str(home),
        # Watchers must not touch anything real while the listing is taken.
        "WEATHER_API_BASE": "http://127.0.0.1:9",
        "GOOGLE_API_ENDPOINT": "http://127.0.0.1:9",
        "SSH_MCP_ALIASES": str(home / "aliases.json"),
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        f"bothost.mcp_servers.{name}",
        cwd=ROOT,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        async with asyncio.timeout(DEADLINE_SECONDS):
            tools: list[dict[str, Any]] = []
            cursor = None
            await _send(proc.stdin, 1, "initialize", _INIT)
            await _reply(proc.stdout, 1)
            proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            request_id = 2
            while True:
                params = {"cursor": cursor} if cursor else {}
                await _send(proc.stdin, request_id, "tools/list", params)
                page = await _reply(proc.stdout, request_id)
                tools += page["tools"]
                cursor = page.get("nextCursor")
                if not cursor:
                    return tools
                request_id += 1
    finally:
        proc.stdin.close()
        if proc.returncode is None:
            proc.terminate()
        await proc.wait()


_INIT = initialize_params("listing-test")


async def _send(stdin: asyncio.StreamWriter, request_id: int, method: str, params: dict) -> None:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    stdin.write(json.dumps(message).encode() + b"\n")
    await stdin.drain()


async def _reply(stdout: asyncio.StreamReader, request_id: int) -> dict[str, Any]:
    """The result of our request `request_id`, skipping the notifications in between."""
    while True:
        line = await stdout.readline()
        if not line:
            raise ConnectionError("server closed stdout")
        message = json.loads(line)
        if message.get("id") == request_id:
            assert "result" in message, message
            return message["result"]


@pytest.mark.parametrize("server", SERVERS)
async def test_tools_list_matches_the_snapshot(server, home):
    expected = json.loads(SNAPSHOT.read_text())[server]
    assert await list_tools(server, home) == expected


def _record() -> None:
    import tempfile

    async def everything() -> dict[str, Any]:
        out = {}
        for name in SERVERS:
            with tempfile.TemporaryDirectory() as home:
                out[name] = await list_tools(name, Path(home))
        return out

    SNAPSHOT.write_text(json.dumps(asyncio.run(everything()), indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python tests/mcp_servers/test_tool_listings.py --record")
    _record()
