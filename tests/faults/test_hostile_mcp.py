"""A hostile MCP server beside a polite one, under the real ``bothost run``.

Each test starts the host as a user does (a subprocess with a config naming
``hostile_server.py MODE`` and a polite neighbour, web on a free port), lets the hostile
server misbehave for a bounded while, and holds the host to its resource bounds: its RSS
stays under 150 MB, ``/healthz`` answers each request before the host has spent 2 s of its
own CPU time on it (a starved listener burns CPU on the flood and never answers; counting
the host's CPU, not the wall clock, keeps a loaded machine from failing a healthy host), the
polite server's tool still answers, and SIGTERM stops the host within a bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
import yaml

from tests.helpers import COMMAND_SECONDS, bothost_process, free_port, run_bothost, until

HOSTILE = Path(__file__).with_name("hostile_server.py")
MAX_RSS_KB = 150 * 1024  # the bound for a host under a hostile server's flood
# CPU time the host may spend while one /healthz waits. Relative to the CPU the host gets:
# a flooded host on an idle machine answers in well under 1 s of wall time, but under a
# load of 10 on 2 cores the same host took 0.3-1.3 s of wall time (and the old 1 s client
# timeout flaked); its CPU time per request stays the same whatever the load.
HEALTH_CPU_SECONDS = 2.0
# a listener that never answers while the host does not even use CPU (blocked on a pipe)
HEALTH_WALL_SECONDS = 30.0
CPU_POLL = 0.05  # seconds between readings of the host's CPU time during a request
# How much of a flood the host must take while it is sampled: an amount, not a time, so every
# machine tests the same flood (the old 6 s were 2-20 MB of it at load 10, depending on the
# mode, and more idle). 8 MB of list_changed are 130,000 notifications: with the old task per
# notification (1.2 GB in 45 s; a task and its coroutine are over 1 KB) the host passes
# MAX_RSS_KB before the end.
FLOOD_BYTES = 8 * 1024 * 1024
# Floods of which the host writes every line to the server's log or to the store take far
# longer per byte (70-400 KB/s at load 10): 2 MB are still 20,000 lines or more. "huge"
# streams lines of 100 MB: 160 MB are more than a host that buffered a line could hold under
# the bound, and pass the client's line cap (16 MB) many times.
FLOOD_BYTES_OF = {
    "flood-message": 2 * 1024 * 1024,
    "flood-event": 2 * 1024 * 1024,
    "stderr": 2 * 1024 * 1024,
    "huge": 160 * 1024 * 1024,
}
AFTER_BYTES = 1024 * 1024  # the flood taken once more after the calls, still bounded
FLOOD_BOUND = 120.0  # generous: a loaded machine taking the amount; the test's own limit is 180 s
SAMPLE_EVERY = 0.25  # between samples of RSS and /healthz during a flood
START_BOUND = 30.0  # generous: the host's own start on a loaded machine
STOP_BOUND = 20.0  # SIGTERM → exit: notifications drain (2 s) + server SIGTERM/SIGKILL (3 s)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of the process so far (all its threads), from /proc."""
    # fields after the ")" that ends the command name start at field 3; utime is 14, stime 15
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kb(pid: int) -> int:
    for entry in Path(f"/proc/{pid}/status").read_text().splitlines():
        if entry.startswith("VmRSS:"):
            return int(entry.split()[1])
    raise AssertionError(f"no VmRSS for pid {pid}")


def server(mode: str, mark: Path | None = None, **env: str) -> dict:
    """A hostile server in ``mode``; with ``mark``, it creates that file once it misbehaves
    and counts the bytes it writes in ``mark`` + ".count" (see :class:`Flood`)."""
    extra = {"HOSTILE_MARK": str(mark), "HOSTILE_COUNT": f"{mark}.count"} if mark else {}
    return {
        "command": sys.executable,
        "args": [str(HOSTILE), mode],
        "timeout": "10s",
        "env": {**extra, **env},
    }


@dataclass
class RunningHost:
    process: asyncio.subprocess.Process
    port: int
    home: Path
    client: aiohttp.ClientSession

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def healthz(self) -> dict:
        """GET /healthz, failing once the host has spent HEALTH_CPU_SECONDS without answering."""
        pid = self.process.pid
        before = cpu_seconds(pid)
        request = asyncio.ensure_future(self._healthz())
        try:
            async with asyncio.timeout(HEALTH_WALL_SECONDS):
                while not request.done():
                    await asyncio.wait({request}, timeout=CPU_POLL)
                    used = cpu_seconds(pid) - before
                    if not request.done() and used > HEALTH_CPU_SECONDS:
                        raise AssertionError(f"/healthz unanswered after {used:.2f} s of host CPU")
        finally:
            request.cancel()
        return request.result()

    async def _healthz(self) -> dict:
        async with self.client.get(self.base + "/healthz") as response:
            assert response.status == 200
            return await response.json()

    async def chat(self, text: str, timeout: float = 30.0) -> str:
        async with self.client.post(
            self.base + "/api/chat",
            json={"session": "t", "text": text},
            timeout=aiohttp.ClientTimeout(total=timeout),
        ) as response:
            assert response.status == 200, await response.text()
            return (await response.json())["reply"]

    def status(self) -> dict[str, dict]:
        path = self.home / "state" / "mcp-status.json"
        try:
            return {s["name"]: s for s in json.loads(path.read_text())["servers"]}
        except (OSError, ValueError):
            return {}


@contextlib.asynccontextmanager
async def bothost_run(
    tmp_path: Path, home: Path, servers: dict, start_bound: float = START_BOUND
) -> AsyncIterator[RunningHost]:
    port = free_port()
    config = tmp_path / "hostile.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "platforms": {"web": {"port": port}, "console": {"enabled": False}},
                "mcp": {"servers": {"weather": {"enabled": False}, **servers}},
            }
        )
    )
    process = await bothost_process(home, config, "run", stdout=asyncio.subprocess.DEVNULL)
    try:
        banner = await asyncio.wait_for(process.stderr.readline(), start_bound)
        assert f":{port}/" in banner.decode(), banner
        drain = asyncio.ensure_future(process.stderr.read())  # keep the pipe from filling
        async with aiohttp.ClientSession() as client:
            yield RunningHost(process, port, home, client)
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), STOP_BOUND) == 0
        await drain
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def ready(host: RunningHost, *names: str, bound: float = START_BOUND) -> None:
    await until(lambda: all(host.status().get(n, {}).get("state") == "ready" for n in names), bound)


@dataclass
class Flood:
    """The bytes a hostile server started with ``server(mode, mark)`` has written so far."""

    mark: Path

    def written(self) -> int:
        try:
            return int(Path(f"{self.mark}.count").read_bytes() or 0)
        except (OSError, ValueError):  # not yet created
            return 0


async def endure(host: RunningHost, flood: Flood, amount: int) -> int:
    """Sample RSS and /healthz while the hostile server misbehaves, until it has written
    ``amount`` more bytes (so the host has taken them, but what one pipe holds); the highest
    RSS seen."""
    pid = host.process.pid
    highest = 0
    until_written = flood.written() + amount
    ends = time.monotonic() + FLOOD_BOUND
    while True:
        highest = max(highest, rss_kb(pid))
        assert highest < MAX_RSS_KB, f"host RSS {highest // 1024} MB"
        await host.healthz()
        written = flood.written()
        if written >= until_written:
            return highest
        assert time.monotonic() < ends, (
            f"the host took {written - until_written + amount} of {amount} bytes of the flood"
            f" in {FLOOD_BOUND:.0f} s"
        )
        await asyncio.sleep(SAMPLE_EVERY)


async def polite_still_answers(host: RunningHost) -> None:
    reply = await host.chat('call mcp__polite__echo {"text": "still here"}')
    assert "still here" in reply


# modes in which the hostile server still reads its stdin and answers: its own tools must
# keep working too (garbage once killed the reader: a deeply nested line raised past it)
STILL_ANSWERS = {
    "garbage",
    "flood-tools",
    "flood-resources",
    "flood-prompts",
    "flood-message",
    "flood-event",
    "flood-cancelled",
    "stderr",
}
FLOODS = [
    "flood-tools",
    "flood-resources",
    "flood-prompts",
    "flood-message",
    "flood-event",
    "flood-cancelled",
    "flood-ping",
    "flood-roots",
    "flood-elicit",
    "garbage",
    "huge",
    "stderr",
]


@pytest.mark.parametrize("mode", FLOODS)
async def test_host_stays_bounded_and_responsive_under_a_flood(tmp_path, home, mode):
    mark = tmp_path / "flooding"
    async with bothost_run(
        tmp_path, home, {"hostile": server(mode, mark), "polite": server("polite")}
    ) as host:
        await until(mark.exists, START_BOUND)
        flood = Flood(mark)
        await endure(host, flood, FLOOD_BYTES_OF.get(mode, FLOOD_BYTES))
        await polite_still_answers(host)
        if mode in STILL_ANSWERS:
            assert "me too" in await host.chat('call mcp__hostile__echo {"text": "me too"}')
        await endure(host, flood, AFTER_BYTES)
    log = home / "logs" / "mcp"
    size = sum(p.stat().st_size for p in log.glob("hostile.log*"))
    assert size < 12 * 1024 * 1024  # two files of at most 5 MB (and a line or two over)


async def test_progress_flood_during_a_call_stays_bounded(tmp_path, home):
    mark = tmp_path / "flooding"
    async with bothost_run(
        tmp_path, home, {"hostile": server("flood-progress", mark), "polite": server("polite")}
    ) as host:
        await until(mark.exists, START_BOUND)
        await ready(host, "hostile")
        call = asyncio.ensure_future(host.chat("call mcp__hostile__progress_flood {}"))
        try:
            await endure(host, Flood(mark), FLOOD_BYTES)
            await polite_still_answers(host)
        finally:
            call.cancel()
            await asyncio.gather(call, return_exceptions=True)


async def test_endless_paging_and_too_many_tools_are_refused_with_a_clear_error(tmp_path, home):
    async with bothost_run(
        tmp_path,
        home,
        {"paging": server("paging"), "many": server("many-tools"), "polite": server("polite")},
    ) as host:
        await until(
            lambda: (
                host.status().get("paging", {}).get("error")
                and host.status().get("many", {}).get("error")
            ),
            START_BOUND,
        )
        status = host.status()
        assert "tools/list" in status["paging"]["error"]
        assert "tools/list" in status["many"]["error"]
        assert rss_kb(host.process.pid) < MAX_RSS_KB
        await polite_still_answers(host)


async def test_odd_tool_names_are_mapped_without_collisions(tmp_path, home):
    async with bothost_run(
        tmp_path, home, {"x": server("names"), "polite": server("polite")}
    ) as host:
        await ready(host, "x")
        listing = await host.chat("tools")
        names = sorted({w.rstrip(",") for w in listing.split() if w.startswith("mcp__x__")})
        for name in names:
            assert len(name) <= 64 and name.replace("_", "").replace("-", "").isalnum()
        assert "mcp__x__echo" in names and "mcp__x__" not in names
        called = set()
        for name in names:
            reply = await host.chat(f"call {name} {{}}")
            called.add(reply.strip())
        # every string tool but "" is reachable under its own name, none shadowed
        assert {
            "called a b",
            "called a.b",
            "called a_b",
            "called " + "t" * 200,
            "called wetter_☀",
            "called 日本",
        } <= called


async def test_a_stuck_server_delays_neither_the_listener_nor_chat_tools(tmp_path, home):
    mark = tmp_path / "stuck"
    # bounded below the old 15 s start wait: the listener no longer waits for any server
    async with bothost_run(
        tmp_path, home, {"stuck": server("stuck", mark), "polite": server("polite")}, 12
    ) as host:
        await host.healthz()
        await until(mark.exists, START_BOUND)
        assert host.status()["stuck"]["state"] == "starting"
        await ready(host, "polite")
        await polite_still_answers(host)
        env = {**os.environ, "BOTHOST_HOME": str(home)}
        config = tmp_path / "hostile.yaml"
        # a one-shot command lists what is ready and says the rest without waiting for the
        # stuck one: it is still "starting", so its 10 s initialize timeout had not passed.
        # (This said so with a 12 s wall-clock bound, which a chat -m missed at load 11.)
        chat = await asyncio.to_thread(
            run_bothost, "chat", "-m", "tools", config=config, env=env, timeout=COMMAND_SECONDS
        )
        assert chat.returncode == 0, chat.stderr
        assert "mcp__polite__echo" in chat.stdout
        assert "stuck" in chat.stderr and "not ready" in chat.stderr
        assert "stuck not ready (starting)" in chat.stderr, chat.stderr
        listing = await asyncio.to_thread(
            run_bothost, "mcp", "tools", config=config, env=env, timeout=COMMAND_SECONDS
        )
        # `mcp tools` bounds each server's start (5 s) and names the step that hung
        assert "polite/echo" in listing.stdout
        assert "stuck: failed: initialize did not answer within" in listing.stderr
        assert listing.returncode != 0  # not everything it was asked for could be listed
        # the stuck one is recorded with its error and tried again, the host serving all along
        await until(lambda: "initialize" in (host.status()["stuck"].get("error") or ""), 60)
        await until(lambda: host.status()["stuck"]["restarts"] >= 1, 30)
        await host.healthz()


def test_chat_waits_only_for_servers_its_turn_lists(tmp_path, home):
    """`chat -m help` lists no tools, so a hung server costs it nothing and is not
    announced; `chat -m tools` waits for it (bounded) and says it is not ready."""
    config = tmp_path / "hostile.yaml"
    servers = {"stuck": server("stuck", tmp_path / "stuck"), "polite": server("polite")}
    config.write_text(yaml.safe_dump({"mcp": {"servers": servers}}))

    def chat(text: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "BOTHOST_HOME": str(home)}
        return run_bothost("chat", "-m", text, config=config, env=env, timeout=60)

    helped = chat("help")
    assert helped.returncode == 0 and "offline agent" in helped.stdout, helped.stderr
    assert "not ready" not in helped.stderr
    listed = chat("tools")
    assert listed.returncode == 0, listed.stderr
    assert "mcp__polite__echo" in listed.stdout
    assert "stuck" in listed.stderr and "not ready" in listed.stderr
