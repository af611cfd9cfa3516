"""tools/call round trips over stdio: our client against the official Python SDK client and
against two floors, bare clients that do nothing but the round trip.

Each client talks to the same server program (a fresh process each), warms up, then times
sequential ``tools/call`` requests; the figure is the median round trip. The four clients
run in alternating rounds (``--rounds``; the order turns each round), so a change in the
machine's load falls on all of them alike. The floors write one JSON line (``json.dumps``)
and read one back, parsed (``json.loads``), with no checks, no id matched, no timeout:
``floor`` on asyncio's subprocess streams (what a client written the plain asyncio way
pays), ``bare`` on the pipe as ours reads it (the server's stdout a pipe of our own read by
a protocol, a future per call resolved in ``data_received``): the least any asyncio client
can spend. Beside each wall figure the CPU time per call is printed, of the client's own
process (``time.process_time``) and of the server's (``/proc/<pid>/stat``, every thread,
in 10 ms ticks: use enough calls); the rest of the round trip is the pipes and the two
processes' wake-ups (negative when the server's work after it has written the answer —
the paging server ends a thread per call — overlaps the client's on a second core). With
``--count`` each client runs once more inside ``valgrind --tool=callgrind`` (only the
client's process is counted, after a warm-up) and its instructions per call are printed:
the load does not change them. Ours / SDK is ours / floor x floor / SDK: the closer ours is
to a floor, the more that floor's ratio to the SDK bounds ours.

The default server is our raw test server (tests/mcp/servers/paging_server.py, tool
``echo``), which answers fast enough that the clients' own overhead dominates; ``--server
kit`` uses the echo server written on our servers' kit (tests/mcp_servers/echo_server.py),
which shows the kit's own reply latency; ``--server time`` uses ``mcp-server-time`` from
PyPI (an SDK server) instead.

Run: .venv/bin/python bench/mcp_call.py [--calls N] [--rounds N] [--server paging|kit|time]
     [--count]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WARMUP = 20  # calls before timing: imports, caches and the server's first-call costs
CLIENTS = ("floor", "bare", "ours", "sdk")
TICK = os.sysconf("SC_CLK_TCK")  # /proc/<pid>/stat counts CPU time in these
COUNTED_CALLS = 300  # calls counted under callgrind (each client ~50x slower there)
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

Call = Callable[[], Awaitable[object]]


@dataclass
class Run:
    """One client's timed calls: round trips (s), and CPU seconds per call of each side."""

    samples: list[float] = field(default_factory=list)
    client_cpu: list[float] = field(default_factory=list)
    server_cpu: list[float] = field(default_factory=list)


def server_env() -> dict[str, str]:
    return {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system, every thread, dead ones too) of process `pid`."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime: fields 14 and 15


def child_pid() -> int:
    """The one live child of this process (the server; the SDK does not tell its pid)."""
    found = []
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as children:
            found += [int(pid) for pid in children.read().split()]
    if len(found) != 1:
        raise SystemExit(f"expected one server process, found {found}")
    return found[0]


async def time_calls(call: Call, calls: int, server: int, run: Run) -> None:
    for _ in range(WARMUP):
        await call()
    samples = []
    cpu, server_cpu = time.process_time(), process_cpu(server)
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    run.client_cpu.append((time.process_time() - cpu) / calls)
    run.server_cpu.append((process_cpu(server) - server_cpu) / calls)
    run.samples += samples


async def counted_calls(call: Call, calls: int) -> None:
    """Inside callgrind: warm up, zero the counts, make the calls, dump the counts."""
    for _ in range(WARMUP):
        await call()
    pid = str(os.getpid())
    subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True)
    for _ in range(calls):
        await call()
    subprocess.run(["callgrind_control", "-d", "counted", pid], check=True, capture_output=True)


async def ours(argv: list[str], tool: str, arguments: dict, run: Callable[..., Awaitable]):
    from bothost.mcp.session import ClientSession  # each client imports only its own code
    from bothost.mcp.stdio import StdioTransport

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

        assert session.transport.pid is not None  # type: ignore[attr-defined]
        await run(call, session.transport.pid)  # type: ignore[attr-defined]
    finally:
        await session.close()
        media.cleanup()


async def sdk(argv: list[str], tool: str, arguments: dict, run: Callable[..., Awaitable]):
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], env=server_env())
    with open(os.devnull, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:

            async def call():
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, result

            await run(call, child_pid())


async def floor(argv: list[str], tool: str, arguments: dict, run: Callable[..., Awaitable]):
    """The bare client: a line out, a line in, parsed; the handshake once, as the spec asks."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=server_env(),
        limit=16 * 1024 * 1024,
    )
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None and stdout is not None
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "floor"}}
    stdin.write(
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}).encode()
    )
    stdin.write(b'\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    json.loads(await stdout.readline())
    ids = iter(range(1, 1 << 62))
    params = {"name": tool, "arguments": arguments}

    async def call():
        request = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call", "params": params}
        stdin.write(json.dumps(request).encode() + b"\n")
        return json.loads(await stdout.readline())

    try:
        await run(call, proc.pid)
    finally:
        stdin.close()
        proc.terminate()
        await proc.wait()


class LineProtocol(asyncio.Protocol):
    """The bare floor's stdout: each chunk that ends a line resolves the waiting future."""

    def __init__(self) -> None:
        self.waiter: asyncio.Future | None = None
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.buffer.endswith(b"\n") and self.waiter is not None:
            line, self.buffer = self.buffer, b""
            self.waiter.set_result(line)


async def bare(argv: list[str], tool: str, arguments: dict, run: Callable[..., Awaitable]):
    """The least any asyncio client can do: the server's stdout a pipe of our own read by a
    protocol (as ours reads it), a future per call resolved in ``data_received``."""
    loop = asyncio.get_running_loop()
    read_end, write_end = os.pipe()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=write_end,
        stderr=asyncio.subprocess.DEVNULL,
        env=server_env(),
    )
    os.close(write_end)
    protocol = LineProtocol()
    pipe, _ = await loop.connect_read_pipe(lambda: protocol, os.fdopen(read_end, "rb", 0))
    stdin = proc.stdin
    assert stdin is not None
    ids = iter(range(1 << 62))
    params = {"name": tool, "arguments": arguments}

    async def call(method: str = "tools/call", params: dict = params):
        protocol.waiter = loop.create_future()
        request = {"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}
        stdin.write(json.dumps(request).encode() + b"\n")
        return json.loads(await protocol.waiter)

    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bare"}}
    await call("initialize", hello)
    stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    try:
        await run(call, proc.pid)
    finally:
        stdin.close()
        proc.terminate()
        await proc.wait()
        pipe.close()


RUNNERS = {"floor": floor, "bare": bare, "ours": ours, "sdk": sdk}


async def bench_round(clients: tuple[str, ...], server: str, calls: int, runs: dict) -> None:
    argv, tool, arguments = SERVERS[server]
    for name in clients:

        async def timed(call: Call, pid: int, run: Run = runs[name]) -> None:
            await time_calls(call, calls, pid, run)

        await RUNNERS[name](argv, tool, arguments, timed)


def count(name: str, server: str, out: Path) -> int:
    """Instructions per call of client `name`'s process, counted by callgrind."""
    pattern = out / f"{name}.%p"
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={pattern}",
        sys.executable,
        __file__,
        "--serve",
        name,
        "--server",
        server,
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{name}: exit {done.returncode}\n{done.stderr[-2000:]}")
    total = 0
    for dump in out.glob(f"{name}.*.1"):  # the dump asked for is part 1 (at exit: part 2)
        found = re.search(r"^summary: (\d+)", dump.read_text(errors="replace"), re.M)
        total += int(found.group(1)) if found else 0
    return total // COUNTED_CALLS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--server", choices=sorted(SERVERS), default="paging")
    parser.add_argument("--count", action="store_true", help="instructions per call too")
    parser.add_argument("--serve", choices=CLIENTS, help="(internal) one client, in callgrind")
    args = parser.parse_args()
    if args.serve:
        argv, tool, arguments = SERVERS[args.server]

        async def counted(call: Call, pid: int) -> None:
            await counted_calls(call, COUNTED_CALLS)

        asyncio.run(RUNNERS[args.serve](argv, tool, arguments, counted))
        return
    runs = {name: Run() for name in CLIENTS}
    for i in range(args.rounds):
        turn = i % len(CLIENTS)
        asyncio.run(bench_round(CLIENTS[turn:] + CLIENTS[:turn], args.server, args.calls, runs))
    counts: dict[str, int] = {}
    if args.count:
        with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as pool:
            found = pool.map(lambda name: count(name, args.server, Path(tmp)), CLIENTS)
            counts = dict(zip(CLIENTS, found, strict=True))
    print(
        f"tools/call round trip over stdio, server {args.server}, "
        f"{args.rounds} rounds of {args.calls} calls each; load {os.getloadavg()[0]:.1f}"
    )
    print(f"  {'client':8s}{'median':>10s}{'client CPU':>12s}{'server CPU':>12s}{'rest':>10s}")
    wall, cpu = {}, {}
    for name in CLIENTS:
        run = runs[name]
        wall[name] = statistics.median(run.samples)
        cpu[name] = statistics.median(run.client_cpu)
        server = statistics.median(run.server_cpu)
        rest = wall[name] - cpu[name] - server
        print(
            f"  {name:8s}{wall[name] * 1e6:8.0f}µs{cpu[name] * 1e6:10.0f}µs{server * 1e6:10.0f}µs"
            f"{rest * 1e6:8.0f}µs" + (f"{counts[name]:12,} instructions" if counts else "")
        )
    for mine, theirs in (("ours", "sdk"), ("ours", "floor"), ("ours", "bare")):
        line = f"  {mine} / {theirs}:".ljust(16) + f"{wall[mine] / wall[theirs]:.2f}x wall, "
        line += f"{cpu[mine] / cpu[theirs]:.2f}x client CPU"
        if counts:
            line += f", {counts[mine] / counts[theirs]:.2f}x instructions"
            line += f" ({counts[mine] - counts[theirs]:+,} a call)"
        print(line)
    for floor_name in ("floor", "bare"):  # ours / SDK = ours / floor x floor / SDK
        print(
            f"  {floor_name} / sdk:".ljust(16) + f"{wall[floor_name] / wall['sdk']:.2f}x wall "
            "(ours / SDK if ours were this floor)"
        )


if __name__ == "__main__":
    main()
