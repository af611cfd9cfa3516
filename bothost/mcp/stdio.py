"""The stdio transport: a server subprocess speaking newline-delimited JSON-RPC.

The server runs in its own process group (``start_new_session``) so shutdown reaches the
helpers it forks: SIGTERM to the group, SIGKILL after a grace period. Stdout is split into
lines by our own bounded reader: a line that is not JSON-RPC is logged and skipped, and a
line longer than the bound is dropped as it streams in (never buffered whole), so one
misbehaving server cannot exhaust the host's memory; and after each line the reader asks
the session's ``backlog`` (its notification queue below the high marks) and stops reading
while it is full, so a server that floods faster than the host keeps up blocks on its own
full pipe. Stdout is a pipe of our own read by a protocol, not the subprocess's stream: an
answer then wakes its caller one loop iteration after the bytes arrive instead of three
(asyncio's subprocess transport relays data with ``call_soon``, and a reader task is one
more hop), the larger part of our own time in a ``tools/call`` round trip (issue 19).
Stderr goes line by line into the server's log (rotated), long lines cut, so endless stderr
costs no memory, and within a budget — the one its ``notifications/message`` lines have
(:data:`~bothost.mcp.flood.LOG_BURST` at once, then :data:`~bothost.mcp.flood.LOG_RATE`
a second) — so endless stderr costs little CPU either: lines beyond it are read, counted
and dropped, the count said in the log (at once, then at most every 10 s, and in all at
exit). The last lines are kept whatever the budget, for the exit reason. The transport
closes — and says why — when the process exits; a write that finds stdin closed first waits
briefly for that exit and says it, whichever of the two the event loop saw first.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import signal
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from bothost.logs.rate import RateLimitedLog
from bothost.mcp import jsonrpc
from bothost.mcp.flood import LOG_BURST, LOG_RATE, Budget, Tally
from bothost.mcp.transport import Backlog, OnClose, OnMessage, OnSessionLost, TransportError
from bothost.redact import command_line

MAX_LINE = 16 * 1024 * 1024  # a base64 image fits; anything bigger is a broken server
READ_CHUNK = 256 * 1024
MAX_STDERR_LINE = 64 * 1024  # longer stderr lines are cut, not refused
# A server that exits says why on stderr ("MY_API_KEY is required"); its last lines go with
# the exit reason so `mcp list` and a failed call say it, not only `mcp logs`.
STDERR_TAIL_LINES = 3
STDERR_TAIL_CHARS = 300
# Each stderr line written costs what a notifications/message line does (formatting,
# redaction, the rotating file: ~80 µs), so it gets the same budget (flood.py says why).
STDERR_RATE = LOG_RATE
STDERR_BURST = LOG_BURST
TERM_GRACE = 3.0  # DESIGN: SIGKILL 3 s after SIGTERM
EXIT_DRAIN = 0.5  # after exit, how long stdout may still deliver buffered answers
# A write that finds stdin closed is usually a server exiting: its exit, with the stderr lines
# that say why, follows within EXIT_DRAIN of being seen. Under load the closed pipe was seen
# first in 7 of 8 starts ("server stdin closed: Connection lost"), so a failed write waits this
# long for the exit and reports that instead (issue 34).
EXIT_WAIT = 2.0
# An over-long *response* names its id near one end: failing that call at once beats letting
# it wait for its timeout. Python and most servers write "jsonrpc" and "id" before "result";
# TypeScript servers write them after it, so the last bytes are read too. Only top-level
# members match: the head is walked member by member from the opening brace, and the tail must
# end with the closing brace right after them (a nested "id" is followed by two).
IDENTITY = rb'"(jsonrpc|id)"\s*:\s*("[^"\\]{0,200}"|-?\d{1,18})'
HEAD_MEMBER = re.compile(rb"\s*" + IDENTITY + rb"\s*,")
HEAD_START = re.compile(rb"\s*\{")
HEAD_ANSWER = re.compile(rb'\s*"(?:result|error)"\s*:')
TAIL_MEMBERS = re.compile(rb",\s*" + IDENTITY + rb"\s*(?:,\s*" + IDENTITY + rb"\s*)?\}\s*$")
EDGE_BYTES = 256  # how much of each end of a refused line is kept to find its id
# A read this big is a server writing faster than we split lines (answers are far smaller):
# the reader then lets the rest of the event loop run before it reads again.
SHARE_BYTES = 64 * 1024


def refused_id(head: bytes, tail: bytes) -> str | int | None:
    """The id of the response a refused line carried, if its ends show one; else None."""
    members: dict[bytes, bytes] = {}
    start = HEAD_START.match(head)
    pos = start.end() if start else len(head)
    while start and (member := HEAD_MEMBER.match(head, pos)):
        members[member.group(1)] = member.group(2)
        pos = member.end()
    if not start or not HEAD_ANSWER.match(head, pos):
        return None  # not a response (a request or notification has "method" first)
    if b"id" not in members and (end := TAIL_MEMBERS.search(tail)):
        members.update({end.group(1): end.group(2)})
        if end.group(3):
            members[end.group(3)] = end.group(4)
    raw = members.get(b"id")
    if raw is None or members.get(b"jsonrpc", b'"2.0"') != b'"2.0"':
        return None
    return raw[1:-1].decode() if raw.startswith(b'"') else int(raw)


class StdioTransport:
    """One server process; ``send`` writes a line, received messages go to ``on_message``."""

    def __init__(
        self,
        command: str,
        args: list[str],
        env: dict[str, str],
        *,
        log: logging.Logger,
        cwd: str | None = None,
        max_line: int = MAX_LINE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.command = command
        self.args = list(args)
        self.env = env
        self.cwd = cwd
        self.log = log
        # what a server prints on stdout is its to repeat: one line a minute, with a count
        self.complaints = RateLimitedLog(log)
        self.max_line = max_line
        self.pid: int | None = None
        self.returncode: int | None = None
        self.on_session_lost: OnSessionLost | None = None
        self.backlog: Backlog | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._stdout: asyncio.ReadTransport | None = None
        self._tasks: list[asyncio.Task] = []
        # the line read so far; inside an over-long line, only its last bytes
        self._buffer = bytearray()
        self._refused: bytes | None = None  # inside an over-long line: its head (rest dropped)
        self._held = b""  # bytes read but not yet split while the backlog is full
        self._paused = False  # reading stopped until the backlog has room
        self._write_lock = asyncio.Lock()
        self._on_message: OnMessage | None = None
        self._on_close: OnClose | None = None
        self._closed = False
        self._close_reason: str | None = None
        self._reason_known = asyncio.Event()
        self._stdout_done = asyncio.Event()
        self._stderr_done = asyncio.Event()
        self._stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._stderr_budget = Budget(STDERR_RATE, STDERR_BURST, clock)
        self._stderr_over = Tally(log, clock, label="stderr flood control")
        self.stderr_dropped = 0  # stderr lines not written to the log (over the budget)

    async def start(self, on_message: OnMessage, on_close: OnClose) -> None:
        self._on_message, self._on_close = on_message, on_close
        read_end, write_end = os.pipe()
        try:
            self._proc = await asyncio.create_subprocess_exec(
                self.command,
                *self.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=write_end,
                stderr=asyncio.subprocess.PIPE,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,
            )
        except OSError as exc:
            os.close(read_end)
            raise TransportError(f"cannot start {self.command!r}: {exc.strerror or exc}") from None
        finally:
            os.close(write_end)  # the server holds it now: EOF once the server's copies close
        self.pid = self._proc.pid
        self.log.info("started %s (pid %s)", command_line(self.command, self.args), self.pid)
        self._stdout, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: StdoutProtocol(self), os.fdopen(read_end, "rb", buffering=0)
        )
        self._tasks = [
            asyncio.create_task(self._read_stderr(), name=f"mcp-stderr-{self.pid}"),
            asyncio.create_task(self._watch_exit(), name=f"mcp-exit-{self.pid}"),
        ]

    def negotiated(self, protocol_version: str) -> None:
        pass

    async def opened(self) -> None:
        pass

    def abandoned(self, request_id: Any) -> None:
        pass  # one pipe for everything: a late answer is dropped by the session

    async def send(self, message: jsonrpc.Message, headers: dict[str, str] | None = None) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or self._closed:
            why = self._close_reason if self._close_reason else "is not running"
            raise TransportError(f"server {why}")
        data = jsonrpc.encode(message)
        async with self._write_lock:
            try:
                proc.stdin.write(data)
                await proc.stdin.drain()
            except (ConnectionError, RuntimeError) as exc:
                raise TransportError(await self._why_closed(f"stdin closed: {exc}")) from None

    async def _why_closed(self, fallback: str) -> str:
        """Why writing failed, as ``server …``: the process's exit (its status and last
        stderr lines) when it is seen within :data:`EXIT_WAIT`, else ``fallback``."""
        try:
            async with asyncio.timeout(EXIT_WAIT):
                await self._reason_known.wait()
        except TimeoutError:
            return f"server {fallback}"
        return f"server {self._close_reason}"

    def _feed(self, chunk: bytes) -> None:
        """Split ``chunk`` into lines and hand each on; stop reading while the backlog is
        full (the rest of the chunk waits in ``_held``)."""
        buffer, start, find = self._buffer, 0, chunk.find
        line_of, backlog = self._line, self.backlog  # asked per line: looked up once
        while (end := find(b"\n", start)) != -1:
            if not buffer and self._refused is None and end - start <= self.max_line:
                line = chunk[start:end]  # the whole line in this chunk: its one copy
                start = end + 1
            else:
                buffer += chunk[start:end]
                start = end + 1
                if self._refused is not None:
                    self._refused_end(self._refused, bytes(buffer[-EDGE_BYTES:]))
                    self._refused = None
                    buffer.clear()
                    continue
                if len(buffer) > self.max_line:
                    head = bytes(buffer[:EDGE_BYTES])
                    if not self._refused_start(head):
                        self._refused_end(head, bytes(buffer[-EDGE_BYTES:]))
                    buffer.clear()
                    continue
                line = bytes(buffer)
                buffer.clear()
            line_of(line)
            if backlog is not None and (waiter := backlog()) is not None:
                self._pause(waiter, chunk[start:])  # a flood waits in the server's pipe
                return
        buffer += chunk[start:]
        if self._refused is None and len(buffer) > self.max_line:
            head = bytes(buffer[:EDGE_BYTES])
            # Answered from the head already: the end has nothing left to do.
            self._refused = b"" if self._refused_start(head) else head
        if self._refused is not None:
            del buffer[:-EDGE_BYTES]

    def _pause(self, waiter: Awaitable[object], rest: bytes) -> None:
        assert self._stdout is not None
        self._stdout.pause_reading()
        self._paused, self._held = True, rest
        task = asyncio.ensure_future(self._resume(waiter))
        self._tasks.append(task)
        task.add_done_callback(self._tasks.remove)

    async def _resume(self, waiter: Awaitable[object]) -> None:
        await waiter
        held, self._held, self._paused = self._held, b"", False
        self._feed(held)
        if not self._paused and self._stdout is not None and not self._stdout.is_closing():
            self._stdout.resume_reading()

    def _yield_turn(self) -> None:
        """Read no more in this loop iteration: what else is ready runs before the next
        read (the reader task this replaced gave way so, being one more hop)."""
        stdout = self._stdout
        if stdout is None or self._paused or stdout.is_closing():
            return
        stdout.pause_reading()
        asyncio.get_running_loop().call_soon(self._turn_back)

    def _turn_back(self) -> None:
        if not self._paused and self._stdout is not None and not self._stdout.is_closing():
            self._stdout.resume_reading()

    def _stdout_ended(self) -> None:
        if self._buffer.strip() and self._refused is None:
            self._line(bytes(self._buffer))
        self._buffer.clear()
        self._stdout_done.set()

    def _line(self, line: bytes) -> None:
        if not line or line.isspace():  # (strip() would copy every line to ask)
            return
        try:
            messages = jsonrpc.decode(line)
        except jsonrpc.ProtocolError as exc:
            self.complaints.warning("stdout", "skipped a stdout line (%s): %.200r", exc, line)
            return
        size = len(line) // len(messages) if messages else 0
        on_message = self._on_message
        assert on_message is not None
        for message in messages:
            try:
                on_message(message, None, size)
            except Exception:  # boundary: one bad message must not stop the reader
                self.log.exception("handling a message failed: %.200r", message)

    def _refused_start(self, head: bytes) -> bool:
        """Log an over-long line; fail its call at once if the head names it. True if it did."""
        self.log.error("refused a stdout line longer than %d bytes: %.120r…", self.max_line, head)
        return self._refused_end(head, b"")

    def _refused_end(self, head: bytes, tail: bytes) -> bool:
        """Fail the call an over-long response answered, found from its ends. True if found."""
        id_ = refused_id(head, tail) if head else None
        if id_ is None or self._on_message is None:
            return False
        message = f"response longer than {self.max_line} bytes refused"
        self._on_message(jsonrpc.error(id_, jsonrpc.INTERNAL_ERROR, message), None)
        return True

    async def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        reader = self._proc.stderr
        pending = b""
        while chunk := await reader.read(READ_CHUNK):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                self._stderr_line(line)
            if len(pending) > MAX_STDERR_LINE:
                self._stderr_line(pending[:MAX_STDERR_LINE])
                pending = b""
        if pending:
            self._stderr_line(pending)
        self._stderr_done.set()

    def _stderr_line(self, line: bytes) -> None:
        text = line[:MAX_STDERR_LINE].decode("utf-8", "replace").rstrip("\r")
        if self._stderr_budget.take():
            self.log.info("[stderr] %s", text)
        else:
            self.stderr_dropped += 1
            self._stderr_over.add(f"stderr lines beyond {STDERR_RATE:.0f} a second dropped")
        if text.strip():
            self._stderr_tail.append(text.strip()[:STDERR_TAIL_CHARS])

    async def _watch_exit(self) -> None:
        assert self._proc is not None
        code = await self._proc.wait()
        self.returncode = code
        try:  # answers written just before exit are still in the pipe
            async with asyncio.timeout(EXIT_DRAIN):
                await self._stdout_done.wait()
                await self._stderr_done.wait()
        except TimeoutError:
            pass  # a forked helper keeps a pipe open; the server itself is gone
        reason = f"exited with code {code}" if code >= 0 else f"killed by signal {-code}"
        self.log.info("process %s %s", self.pid, reason)
        if self.stderr_dropped:
            self.log.warning(
                "%d stderr lines of process %s were dropped in all (over the log's budget)",
                self.stderr_dropped,
                self.pid,
            )
        if code != 0 and self._stderr_tail:
            reason += ": " + " / ".join(self._stderr_tail)
        self._finish(reason)

    def _finish(self, reason: str) -> None:
        if self._closed:
            return
        self._closed = True
        self._close_reason = reason
        self._reason_known.set()
        if self._on_close is not None:
            self._on_close(reason)

    async def close(self) -> None:
        """Stop the server: close stdin, SIGTERM the group, SIGKILL after the grace period."""
        proc = self._proc
        if proc is None:
            return
        self._finish("closed by the host")
        if proc.returncode is None:
            if proc.stdin is not None:
                proc.stdin.close()
            self._signal(signal.SIGTERM)
            try:
                async with asyncio.timeout(TERM_GRACE):
                    await proc.wait()
            except TimeoutError:
                self.log.warning("pid %s ignored SIGTERM for %.0f s; SIGKILL", self.pid, TERM_GRACE)
                self._signal(signal.SIGKILL)
                await proc.wait()
        self._signal(signal.SIGKILL)  # helpers left in the group after the leader exited
        try:  # with the group gone the pipes reach EOF; let the readers finish cleanly
            async with asyncio.timeout(TERM_GRACE):
                await asyncio.gather(*self._tasks, return_exceptions=True)
                await self._stdout_done.wait()
        except TimeoutError:
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._stdout is not None:
            self._stdout.close()

    def _signal(self, sig: int) -> None:
        if self.pid is None:
            return
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


class StdoutProtocol(asyncio.Protocol):
    """The server's stdout pipe: bytes go straight to the transport's line splitter."""

    def __init__(self, owner: StdioTransport) -> None:
        self.owner = owner

    def data_received(self, data: bytes) -> None:
        self.owner._feed(data)
        if len(data) >= SHARE_BYTES:  # a flood: the loop's other work gets its turn first
            self.owner._yield_turn()

    def eof_received(self) -> None:
        pass  # connection_lost follows: the pipe is closed there

    def connection_lost(self, exc: Exception | None) -> None:
        self.owner._stdout_ended()
