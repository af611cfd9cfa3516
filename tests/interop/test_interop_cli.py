"""Real MCP servers through the installed ``bothost mcp call``: what a person reads of text,
structured, image and error results, and the exit status (1 for an error result)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
import pytest_asyncio
from interop_cases import CASES, check_readable

from tests.helpers import write_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

BOTHOST = Path(sys.executable).with_name("bothost")
CALL_BOUND = 60.0  # seconds for one command: start the server, call, stop (about two here)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def config_file(interop_home, interop_servers):
    return write_config(interop_home.parent / "bothost.yaml", {"mcp": {"servers": interop_servers}})


async def bothost(home: Path, config: Path, *args: str) -> tuple[int, str, str]:
    """Run the installed CLI in a process of its own (the event loop keeps serving our page)."""
    proc = await asyncio.create_subprocess_exec(
        str(BOTHOST),
        "--home",
        str(home),
        "--config",
        str(config),
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(CALL_BOUND):
            out, err = await proc.communicate()
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("case", [c for c in CASES if c.cli], ids=lambda c: c.id)
async def test_mcp_call_shows_what_a_person_reads(case, places, interop_home, config_file):
    code, out, err = await bothost(
        interop_home,
        config_file,
        "mcp",
        "call",
        case.server,
        case.tool,
        json.dumps(case.arguments(places)),
    )
    assert code == (1 if case.error else 0), (out, err)
    # no warnings, no restarts, no tracebacks: only where each saved file is
    saved = [line for line in err.splitlines() if line.startswith("saved ")]
    assert err == "".join(f"{line}\n" for line in saved), err
    for line in saved:
        assert (interop_home / "media" / line.rsplit("/", 1)[1]).is_file(), line
    assert out.endswith("\n")
    check_readable(case, out[:-1], places)
