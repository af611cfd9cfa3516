"""Warnings an outsider can repeat at will stay a few lines, whatever the flood's size.

A hostile MCP server printing garbage on stdout and a sender of forged webhooks each once
wrote one log line per message. Each test runs the real ``bothost run``, lets the flood
reach a size (thousands of messages, not a time), and counts the lines the host wrote
about it: at most a few per source and kind (one a minute, with a count of the rest; the
count itself is :mod:`tests.core.test_ratelog`'s, as it needs a clock).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import yaml
from bothost.plugins.web.signing import new_secret, sign_headers

from tests.faults.test_hostile_mcp import FLOOD_BOUND, START_BOUND, STOP_BOUND, Flood, server
from tests.helpers import bothost_process, deep, free_port, until

GARBAGE_BYTES = 1024 * 1024  # ~23,000 garbage lines of ~45 bytes (hostile "garbage-lines")
# Lines the host may write about one flood: one per kind of complaint and minute, and the
# flood runs a few minutes at most on a loaded machine; one per message would be thousands.
FEW = 40


@contextlib.asynccontextmanager
async def running(
    tmp_path: Path, home: Path, settings: dict
) -> AsyncIterator[tuple[int, bytearray]]:
    """``bothost run`` with ``settings`` (web on a free port); yields its port and its stderr
    so far, complete once the host has stopped (SIGTERM at the end)."""
    port = free_port()
    config = tmp_path / "flood.yaml"
    base = {"platforms": {"web": {"port": port}, "console": {"enabled": False}}}
    config.write_text(yaml.safe_dump(deep(base, settings)))
    process = await bothost_process(home, config, "run", stdout=asyncio.subprocess.DEVNULL)
    stderr = bytearray()
    try:
        banner = await asyncio.wait_for(process.stderr.readline(), START_BOUND)
        assert f":{port}/" in banner.decode(), banner
        stderr += banner

        async def drain() -> None:
            while chunk := await process.stderr.read(65536):
                stderr.extend(chunk)

        reading = asyncio.ensure_future(drain())
        yield port, stderr
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), STOP_BOUND) == 0
        await reading
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def lines_with(text: str, *paths: Path) -> list[str]:
    found = []
    for path in paths:
        if path.exists():
            found += [line for line in path.read_text().splitlines() if text in line]
    return found


async def test_garbage_on_a_servers_stdout_is_a_few_warnings_not_one_per_line(tmp_path, home):
    mark = tmp_path / "flooding"
    servers = {"weather": {"enabled": False}, "hostile": server("garbage-lines", mark)}
    async with running(tmp_path, home, {"mcp": {"servers": servers}}) as (_, stderr):
        await until(mark.exists, START_BOUND)
        flood = Flood(mark)
        await until(lambda: flood.written() >= GARBAGE_BYTES, FLOOD_BOUND)
    logs = sorted((home / "logs" / "mcp").glob("hostile.log*"))
    skipped = lines_with("skipped", *logs)
    assert skipped, "the first garbage line is still reported"
    assert len(skipped) <= FEW, skipped[:5]
    warnings = lines_with(" WARNING ", *logs)
    assert len(warnings) <= FEW, warnings[:5]
    host = stderr.decode(errors="replace").splitlines()
    assert len(host) <= FEW, host[:5]


FORGED = 1_500  # each kind of refused webhook sent this many times
CONCURRENT = 20  # requests in flight at once


async def test_a_flood_of_refused_webhooks_is_a_few_log_lines(tmp_path, home):
    secret = new_secret()
    settings = {
        "platforms": {"webhook": {"secret": secret}},
        "mcp": {"servers": {"weather": {"enabled": False}}},
    }
    async with running(tmp_path, home, settings) as (port, stderr):
        url = f"http://127.0.0.1:{port}/webhook/events/flood"
        body = json.dumps({"type": "alert", "payload": {"summary": "x"}}).encode()
        replayed = sign_headers(secret, "msg_replayed", body)
        bad_type = b'{"type": "alert/\\ud800", "payload": {}}'  # no store takes it
        kinds = {
            "forged": lambda n: (body, {**sign_headers("whsec_" + "A" * 32, f"f{n}", body)}),
            "stale": lambda n: (body, sign_headers(secret, f"s{n}", body, now=time.time() - 3600)),
            "replayed": lambda n: (body, replayed),
            "not json": lambda n: (b"{", sign_headers(secret, f"j{n}", b"{")),
            "bad type": lambda n: (bad_type, sign_headers(secret, f"t{n}", bad_type)),
        }
        statuses: dict[str, set[int]] = {}
        async with aiohttp.ClientSession() as client:
            for kind, request in kinds.items():
                statuses[kind] = await flood(client, url, request, FORGED)
    assert statuses == {
        "forged": {401},
        "stale": {400},
        "replayed": {200},
        "not json": {400},
        "bad type": {400},
    }
    lines = stderr.decode(errors="replace").splitlines()
    log = home / "logs" / "bothost.log"
    lines += log.read_text().splitlines() if log.exists() else []
    assert len(lines) <= FEW, lines[:5]


async def flood(client, url: str, request, count: int) -> set[int]:
    """Send ``count`` requests made by ``request(n)``, CONCURRENT at a time; the statuses."""
    seen: set[int] = set()
    numbers = iter(range(count))

    async def sender() -> None:
        for n in numbers:
            data, headers = request(n)
            async with client.post(url, data=data, headers=headers) as response:
                seen.add(response.status)
                await response.read()

    await asyncio.gather(*(sender() for _ in range(CONCURRENT)))
    return seen
