"""Drive servers with the official Python SDK 1.x client; run by that SDK's own interpreter.

Not a test module: ``test_sdk1_client.py`` runs it with the Python of a separate venv that
holds ``mcp<2`` (``make peers``), because the test extra installs SDK 2.x. It reads a JSON
list of servers on stdin — ``{"name", "argv", "env", "stderr", "tool", "arguments",
"wait_for"}`` — and drives them all at once: initialize, list the tools, call one, wait
(bounded) until the server's stderr shows ``wait_for`` (the server tried to push an event
while this client was connected), then ping, so anything already sent has been read. It
prints one JSON line per server. The SDK logs what it cannot validate on this process's
stderr, which the test reads.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BOUND = 30.0  # per server: start-up (imports of the Google libraries), one call, one poll


async def wait_for_text(path: Path, text: str) -> None:
    while text not in path.read_text(errors="replace"):
        await anyio.sleep(0.05)


async def drive(spec: dict[str, Any], results: list[dict[str, Any]]) -> None:
    params = StdioServerParameters(command=spec["argv"][0], args=spec["argv"][1:], env=spec["env"])
    stderr = Path(spec["stderr"])
    with anyio.fail_after(BOUND), stderr.open("a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                result = await session.call_tool(spec["tool"], spec.get("arguments") or {})
                if spec.get("wait_for"):
                    await wait_for_text(stderr, spec["wait_for"])
                await session.send_ping()
    results.append(
        {
            "name": spec["name"],
            "tools": sorted(t.name for t in tools.tools),
            "is_error": bool(result.isError),
        }
    )


async def main() -> None:
    specs = json.load(sys.stdin)
    results: list[dict[str, Any]] = []
    async with anyio.create_task_group() as group:
        for spec in specs:
            group.start_soon(drive, spec, results)
    for line in sorted(results, key=lambda r: r["name"]):
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    anyio.run(main)
