"""How third-party stdio servers take a ``server/discover`` sent first (MCP 2026-07-28's probe).

For each server of the interop matrix (tests/interop) and an official SDK 1.x server, the
probe bothost sends first is written to a fresh process and the answer timed: a result
(the server speaks 2026-07-28), an error (-32601 and the like: an older server that says
so, and ``initialize`` follows at once), or nothing within ``WAIT`` seconds (a server that
ignores what it does not know — bothost waits out its probe bound before ``initialize``).
Also timed: how long ``initialize`` alone takes to be answered on a fresh process, the
start-up the probe bound is measured against. Used for docs/mcp.md, "The 2026-07-28 probe".

Run: .venv/bin/python bench/discover_probe.py   (after `make peers`)
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from peers import mcp_sdk1_python, node_server, python_script  # noqa: E402

WAIT = 12.0  # longer than the SDK's and bothost's 10 s bound, so silence is silence
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
DISCOVER = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
SDK1_SERVER = """
from mcp.server.fastmcp import FastMCP
server = FastMCP("sdk1")
@server.tool()
def echo(text: str) -> str:
    return text
server.run()
"""


def commands(scratch: Path) -> dict[str, list[str]]:
    repo = scratch / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    sdk1 = scratch / "sdk1_server.py"
    sdk1.write_text(SDK1_SERVER)
    return {
        "mcp-server-time": [python_script("mcp-server-time")],
        "mcp-server-fetch": [python_script("mcp-server-fetch")],
        "mcp-server-git": [python_script("mcp-server-git"), "--repository", str(repo)],
        "server-everything": node_server(
            "@modelcontextprotocol/server-everything", "mcp-server-everything"
        ),
        "server-filesystem": [
            *node_server("@modelcontextprotocol/server-filesystem", "mcp-server-filesystem"),
            str(scratch),
        ],
        "server-memory": node_server("@modelcontextprotocol/server-memory", "mcp-server-memory"),
        "SDK 2.x (MCPServer)": [sys.executable, str(ROOT / "tests/interop/sdk_server.py")],
        "SDK 1.x (FastMCP)": [str(mcp_sdk1_python()), str(sdk1)],
        "bothost kit (echo)": [sys.executable, str(ROOT / "tests/mcp_servers/echo_server.py")],
    }


async def first_answer(argv: list[str], message: dict) -> tuple[str, float]:
    """What the server answers `message` with when it is the first thing sent, and when."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    began = time.monotonic()
    process.stdin.write((json.dumps(message) + "\n").encode())
    try:
        async with asyncio.timeout(WAIT):
            while line := await process.stdout.readline():
                answer = json.loads(line)
                if answer.get("id") == 1:
                    kind = (
                        f"error {answer['error'].get('code')}"
                        if "error" in answer
                        else "result " + ",".join(answer["result"].get("supportedVersions", []))
                    )
                    return kind, time.monotonic() - began
            return "exited", time.monotonic() - began
    except TimeoutError:
        return "no answer", WAIT
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


async def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        print(f"{'server':22} {'server/discover first':28} {'initialize first':>16}")
        for name, argv in commands(Path(scratch)).items():
            kind, took = await first_answer(argv, DISCOVER)
            _, started = await first_answer(argv, INITIALIZE)
            print(f"{name:22} {kind + f' in {took:.2f} s':28} {started:>14.2f} s")


if __name__ == "__main__":
    asyncio.run(main())
