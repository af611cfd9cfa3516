"""tools/call round trips over stdio: our client against the official Python SDK client.

Both clients talk to the same server program (a fresh process each), warm up, then time
sequential ``tools/call`` requests; the figure is the median round trip. The default
server is our raw test server (tests/mcp/servers/paging_server.py, tool ``echo``), which
answers fast enough that the clients' own overhead dominates; ``--server kit`` uses the
echo server written on our servers' kit (tests/mcp_servers/echo_server.py), which shows the
kit's own reply latency; ``--server time`` uses ``mcp-server-time`` from PyPI (an SDK
server) instead.

Run: .venv/bin/python bench/mcp_call.py [--calls N] [--server paging|kit|time]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from bothost.mcp.session import ClientSession
from bothost.mcp.stdio import StdioTransport

ROOT = Path(__file__).resolve().parent.parent
WARMUP = 20  # calls before timing: imports, caches and the server's first-call costs
SERVERS = {
    "paging": (
        [sys.executable, str(ROOT / "tests/mcp/servers/paging_server.py")],
        "echo",
        {"text": "ping"},
    ),
    "kit": (
        [sys.executable, str(ROOT / "tests/mcp_servers/echo_server.py")],
        "echo",
        {"text": "ping"},
    ),
    "time": (
        [str(Path(sys.executable).with_name("mcp-server-time")), "--local-timezone=UTC"],
        "get_current_time",
        {"timezone": "UTC"},
    ),
}


def server_env() -> dict[str, str]:
    return {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}


async def time_calls(call, calls: int) -> list[float]:
    for _ in range(WARMUP):
        await call()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return samples


async def ours(argv: list[str], tool: str, arguments: dict, calls: int) -> list[float]:
    log = logging.getLogger("bench")
    media = tempfile.TemporaryDirectory()
    session = ClientSession(
        StdioTransport(argv[0], argv[1:], server_env(), log=log),
        name="bench",
        log=log,
        media_dir=Path(media.name),
    )
    await session.start()
    try:

        async def call():
            result = await session.call_tool(tool, arguments)
            assert not result.is_error, result.text

        return await time_calls(call, calls)
    finally:
        await session.close()
        media.cleanup()


async def sdk(argv: list[str], tool: str, arguments: dict, calls: int) -> list[float]:
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=server_env())
    with open(os.devnull, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:

            async def call():
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, result

            return await time_calls(call, calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--server", choices=sorted(SERVERS), default="paging")
    args = parser.parse_args()
    argv, tool, arguments = SERVERS[args.server]
    mine = statistics.median(asyncio.run(ours(argv, tool, arguments, args.calls)))
    theirs = statistics.median(asyncio.run(sdk(argv, tool, arguments, args.calls)))
    print(
        f"tools/call round trip over stdio, server {args.server}, {args.calls} calls each (median):"
    )
    print(f"  bothost client        {mine * 1e3:8.3f} ms")
    print(f"  mcp SDK client        {theirs * 1e3:8.3f} ms")
    print(f"  ratio SDK / bothost   {theirs / mine:8.2f}x")


if __name__ == "__main__":
    main()
