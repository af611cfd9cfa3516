"""``bothost doctor`` says each check's line as soon as it is known (issue 39).

Found from outside: doctor printed nothing for 31 s while one MCP server's ``initialize``
timed out, then every line at once. The server here is a real process that reads its stdin
and never answers (it exits when doctor's end closes the pipe).
"""

from __future__ import annotations

import asyncio
import sys

import yaml

from tests.helpers import bothost_process

SILENT = [sys.executable, "-c", "import sys; sys.stdin.read()"]  # initialize never answered
WAIT = 60.0  # a line the machine, however loaded, prints long before a minute


async def line_with(stream: asyncio.StreamReader, text: str, seen: list[str]) -> str:
    """Read lines (each kept in ``seen``) until one holds ``text``; fails at its end."""
    async with asyncio.timeout(WAIT):
        while True:
            line = (await stream.readline()).decode()
            assert line, f"ended before {text!r}: {seen}"
            seen.append(line)
            if text in line:
                return line


async def test_doctor_prints_each_line_while_a_server_has_not_answered(home, tmp_path):
    config = tmp_path / "bothost.yaml"
    servers = {"weather": {"enabled": False}, "silent": {"command": SILENT[0], "args": SILENT[1:]}}
    config.write_text(
        yaml.safe_dump({"mcp": {"servers": servers}, "platforms": {"web": {"port": 0}}})
    )
    doctor = await bothost_process(home, config, "doctor", "--offline")
    out: list[str] = []
    err: list[str] = []
    try:
        assert doctor.stdout is not None and doctor.stderr is not None
        await line_with(doctor.stdout, "ok  database", out)
        await line_with(doctor.stderr, "checking MCP server silent…", err)
        assert doctor.returncode is None  # both said while the server's check goes on
        assert out[0].startswith("ok  config: loaded from")
        assert not any("mcp silent" in line for line in out)
    finally:
        if doctor.returncode is None:
            doctor.terminate()
        await doctor.wait()
