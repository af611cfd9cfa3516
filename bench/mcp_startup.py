"""Start-up with many MCP servers: all together against the slowest one alone.

The four bundled servers (weather, ssh, gmail, gcal: they list their tools without
credentials) and ten stdio echo servers (tests/mcp_servers/echo_server.py) are started by
one MCP manager, in parallel, as ``bothost run`` starts them; the figure is the time until
every one is ready (initialized and its tools listed). The peer is each server started
alone by the same manager: servers that start in parallel should cost about the slowest
one, so the ratio all / slowest-alone is the overhead of starting them together (on two
cores, fourteen Python interpreters importing at once compete for the CPU). Each figure
is the median of ``--runs`` starts.

What bounds the ratio is printed with it: the CPU the servers themselves spend (their
interpreters starting and importing, measured from the reaped children) against the host's
own. The servers' CPU divided by the cores is about the least the together start can take,
and the host's share is a few per cent (issue 19, 2026-12-03: 3.0 s of servers' CPU against
0.09 s of the host's for all fourteen, the slowest server ~0.35 s of CPU alone) — so on an
idle two-core machine the ratio cannot come near 1.5 however lean the host is (about 4).
On a loaded machine each server alone also waits for a core, which flatters the ratio.

A last line is what a person waits for: a host started with all fourteen servers answering
a chat message (a model that answers at once). The host starts its servers in the
background and a turn waits only for the servers its session has activated, so it answers
long before they are all ready.

Run: .venv/bin/python bench/mcp_startup.py [--runs N] [--echo N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from turn_overhead import InstantPlugin  # bench/ is on the path when run as a script

from bothost.config import load
from bothost.hooks.discovery import load_plugins, new_plugin_manager
from bothost.host.host import Host
from bothost.mcp.manager import McpManager
from bothost.models import Address, IncomingMessage
from bothost.store import Store, core_migrations

ROOT = Path(__file__).resolve().parent.parent
ECHO_SERVER = ROOT / "tests" / "mcp_servers" / "echo_server.py"
BUNDLED = ("weather", "ssh", "gmail", "gcal")
READY_BOUND = 120.0  # seconds: a start slower than this is a failure, not a figure


def servers(echo: int) -> dict[str, Any]:
    found: dict[str, Any] = {name: {"enabled": True} for name in BUNDLED}
    for i in range(echo):
        found[f"echo{i}"] = {"command": sys.executable, "args": [str(ECHO_SERVER)]}
    return found


async def start(directory: Path, wanted: dict[str, Any]) -> float:
    """Seconds from the manager's start until every server in `wanted` is ready."""
    path = directory / "bench.yaml"
    path.write_text(yaml.safe_dump({"mcp": {"servers": wanted}}))
    home = directory / "home"
    home.mkdir(mode=0o700, exist_ok=True)
    config = load(path, home)
    store = Store(home / "bench.db", core_migrations())
    enabled = {n: s for n, s in config.mcp.servers.items() if n in wanted}
    manager = McpManager(enabled, store, home, on_events=None, ask=None, publish_status=False)
    try:
        started = time.perf_counter()
        await manager.start()
        await manager.settle(set(wanted), READY_BOUND)
        elapsed = time.perf_counter() - started
        late = [s.name for s in manager.status() if s.name in wanted and s.state != "ready"]
        if late:
            raise SystemExit(f"not ready: {late}")
        return elapsed
    finally:
        await manager.stop()
        store.close()


async def answering(directory: Path, wanted: dict[str, Any]) -> float:
    """Seconds from a host's start, with `wanted` configured, until it answers a message."""
    path = directory / "host.yaml"
    path.write_text(yaml.safe_dump({"llm": {"provider": "instant"}, "mcp": {"servers": wanted}}))
    home = directory / "host-home"
    home.mkdir(mode=0o700, exist_ok=True)
    pm = new_plugin_manager()
    pm.register(InstantPlugin(), name="instant")
    load_plugins(pm, [], [])
    host = Host(load(path, home), home, pm)
    try:
        started = time.perf_counter()
        await host.start(serve_http=False, platforms=False, tick=False)
        message = IncomingMessage(text="hello", address=Address("web", "bench"), user="u1")
        reply = await host.handle_message(message)
        elapsed = time.perf_counter() - started
        assert reply.text == "ok", reply
        return elapsed
    finally:
        await host.stop()


def median_of(runs: int, directory: Path, wanted: dict[str, Any]) -> float:
    return statistics.median(asyncio.run(start(directory, wanted)) for _ in range(runs))


def cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--echo", type=int, default=10)
    args = parser.parse_args()
    everything = servers(args.echo)
    with tempfile.TemporaryDirectory() as tmp:
        alone = {
            name: median_of(args.runs, Path(tmp), {name: config})
            for name, config in everything.items()
            if name in BUNDLED or name == "echo0"
        }
        servers_before = cpu_seconds(resource.RUSAGE_CHILDREN)
        host_before = cpu_seconds(resource.RUSAGE_SELF)
        together = median_of(args.runs, Path(tmp), everything)
        servers_cpu = (cpu_seconds(resource.RUSAGE_CHILDREN) - servers_before) / args.runs
        host_cpu = (cpu_seconds(resource.RUSAGE_SELF) - host_before) / args.runs
        answered = statistics.median(
            asyncio.run(answering(Path(tmp), everything)) for _ in range(args.runs)
        )
    for name, seconds in alone.items():
        print(f"{name:10} alone          {seconds * 1000:7.0f} ms")
    slowest = max(alone.values())
    print(f"all {len(everything)} together       {together * 1000:7.0f} ms")
    print(f"together / slowest alone {together / slowest:7.2f}  (target <= 1.5)")
    cores = os.cpu_count() or 1
    in_servers, in_host = servers_cpu * 1000, host_cpu * 1000
    print(f"CPU per together start: servers {in_servers:.0f} ms, host {in_host:.0f} ms")
    floor = servers_cpu / cores / slowest  # their exit is in it too: about, not exactly
    print(f"servers' CPU / {cores} cores / slowest alone {floor:5.2f}  (about the least possible)")
    print(f"host answering a message, {len(everything)} servers starting {answered * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
