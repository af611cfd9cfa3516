"""Host overhead per turn: a message through the host to a model that answers at once.

The provider returns its reply without I/O, so what is timed is bothost's own path: the
``on_message`` hooks, the session, the budget and permission checks, the history read and
writes in SQLite, the system prompt with its tool groups (the bundled weather server is
running, none activated) and the reply. The floor beside it is the same provider called
directly, and one SQLite ``INSERT`` + commit in WAL mode (a turn writes at least two rows).
Sessions are reused the way a chat reuses them: each turn lands in one of ten sessions, so
histories grow as a conversation's does. A second line times turns of one long conversation
(``--long`` messages before the first timed turn, all within the model's context, so none
is summarised): a turn reads only the messages added since the last one (issue 19).

Run: .venv/bin/python bench/turn_overhead.py [--turns N] [--long N]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from bothost.config import load
from bothost.hooks.discovery import load_plugins, new_plugin_manager
from bothost.hookspecs import hookimpl
from bothost.host.host import Host
from bothost.llm.base import ChatRequest, ChatResponse
from bothost.models import Address, IncomingMessage

WARMUP = 50  # turns before timing: imports, caches, the server's start
SESSIONS = 10  # conversations the turns rotate through
SETTLE = 30.0  # seconds for the weather server to be ready


class Instant:
    name = "instant"

    def __init__(self, config: Any = None) -> None:
        self.calls = 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        return ChatResponse(text="ok")


class InstantPlugin:
    @hookimpl
    def register_llm_providers(self, register: Any) -> None:
        register("instant", Instant)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def host_turns(directory: Path, turns: int, long: int = 0) -> list[float]:
    """Timed turns over SESSIONS sessions; with `long`, over one session that already holds
    `long` messages (its untimed turns add two each)."""
    path = directory / "bench.yaml"
    path.write_text(yaml.safe_dump({"llm": {"provider": "instant"}}))
    home = directory / ("home-long" if long else "home")
    home.mkdir(mode=0o700)
    pm = new_plugin_manager()
    pm.register(InstantPlugin(), name="instant")
    load_plugins(pm, [], [])
    host = Host(load(path, home), home, pm)
    await host.start(serve_http=False, platforms=False, tick=False)
    try:
        if host.mcp is not None:
            await host.mcp.settle(set(host.mcp.runners), SETTLE)
        samples = []
        untimed = long // 2 if long else WARMUP
        for i in range(untimed + turns):
            session = "long" if long else f"s{i % SESSIONS}"
            message = IncomingMessage(text=f"hello {i}", address=Address("web", session), user="u1")
            started = time.perf_counter()
            reply = await host.handle_message(message)
            elapsed = time.perf_counter() - started
            assert reply.text == "ok", reply
            if i >= untimed:
                samples.append(elapsed)
        return samples
    finally:
        await host.stop()


async def provider_calls(turns: int) -> list[float]:
    provider = Instant()
    request = ChatRequest(system="s", messages=[{"role": "user", "content": "hi"}])
    samples = []
    for _ in range(turns):
        started = time.perf_counter()
        await provider.complete(request)
        samples.append(time.perf_counter() - started)
    return samples


def sqlite_commits(directory: Path, turns: int) -> list[float]:
    conn = sqlite3.connect(directory / "floor.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE TABLE m (id INTEGER PRIMARY KEY, session TEXT, content TEXT)")
    samples = []
    for i in range(turns):
        started = time.perf_counter()
        conn.execute("INSERT INTO m (session, content) VALUES (?, ?)", (f"s{i % 10}", "hi"))
        samples.append(time.perf_counter() - started)
    conn.close()
    return samples


def line(label: str, samples: list[float]) -> None:
    p50, p99 = statistics.median(samples), percentile(samples, 0.99)
    print(f"{label:34} p50 {p50 * 1000:7.3f} ms   p99 {p99 * 1000:7.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--long", type=int, default=1000, help="messages in the long one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ours = asyncio.run(host_turns(Path(tmp), args.turns))
        long = asyncio.run(host_turns(Path(tmp), args.turns // 10, args.long))
        bare = asyncio.run(provider_calls(args.turns))
        floor = sqlite_commits(Path(tmp), args.turns)
    print(f"{args.turns} turns over {SESSIONS} sessions, model answering at once\n")
    line("host turn (handle_message)", ours)
    line(f"host turn, {args.long:,}-message session", long)
    line("provider called directly", bare)
    line("one SQLite insert + commit (WAL)", floor)
    ratio = statistics.median(ours) / (2 * statistics.median(floor))
    print(f"\nhost p50 / two commits p50        {ratio:7.1f}x")


if __name__ == "__main__":
    main()
