"""The stdio transport: newline-delimited JSON-RPC on stdin/stdout, logs on stderr.

stdout belongs to the protocol alone. Before serving, the real stdout is duplicated to a
private descriptor and descriptor 1 is pointed at stderr, so a stray `print()` — or a
library or child process writing to fd 1 — lands in the log instead of corrupting the
stream. Every outgoing message, response or notification, is written whole and in order.
The first message of a turn of the event loop is written at once (a reply must not wait a
turn); those that follow it in the same turn share one write at the next turn, and senders
wait (under one lock) for room in the pipe once ``FLUSH_BYTES`` are waiting. End of stdin
ends the server: running calls get a short grace, then are cancelled.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from json import encoder
from typing import TYPE_CHECKING, Any, BinaryIO

from .session import PARSE_ERROR

if TYPE_CHECKING:
    from .server import Server

logger = logging.getLogger(__name__)

# Tool arguments may carry whole files (ssh upload), so allow long lines.
MAX_LINE_BYTES = 64 * 1024 * 1024
# On stdin EOF, calls already running may still finish and answer within this time.
EOF_GRACE_SECONDS = 5.0
# Messages that follow the first in one turn of the event loop go out in one write, unless
# this much is waiting first: a watcher's burst was one write system call per event, which
# bounded the events a server could push (and woke the client once per line).
FLUSH_BYTES = 64 * 1024


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# One compact encoder for every message: json.dumps with options builds a JSONEncoder and
# then a C encoder per call, which was a third of a watcher's cost per pushed event in a
# burst (callgrind). No circular-reference markers (a shared set would keep stale ids after
# a failed call): a message that contains itself fails with RecursionError, not ValueError.
_make_encoder = getattr(encoder, "c_make_encoder", None)  # None without the C accelerator
_C_COMPACT = (
    _make_encoder(None, _not_json, encoder.encode_basestring, None, ":", ",", False, False, True)
    if _make_encoder is not None
    else None
)
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def encode_line(message: dict[str, Any]) -> bytes:
    """``message`` as one line of compact JSON (UTF-8, not ASCII-escaped, newline ended)."""
    if _C_COMPACT is None:
        return (_COMPACT.encode(message) + "\n").encode()
    return ("".join(_C_COMPACT(message, 0)) + "\n").encode()


class StdoutWriter:
    """Writes whole JSON lines to the protocol descriptor, in order: the first line of a turn
    of the event loop at once, the lines after it in that turn joined into one write."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = asyncio.Lock()
        self._transport: asyncio.WriteTransport | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._pending: list[bytes] = []  # whole lines not yet handed to the pipe
        self._pending_bytes = 0
        self._wrote_this_turn = False  # so the next line of this turn joins a batch

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            transport, protocol = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, self._stream
            )
        except (ValueError, OSError):
            return  # a regular file: fall back to blocking writes in a thread
        self._writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def send(self, message: dict[str, Any]) -> None:
        data = encode_line(message)
        writer = self._writer
        if writer is None:
            async with self._lock:
                await asyncio.to_thread(self._write_blocking, data)
            return
        if writer.transport.is_closing():  # the client is gone: not sent (watchers keep it)
            raise ConnectionResetError("stdout is closed")
        if not self._pending and not self._wrote_this_turn:
            # The first line of this turn: written now, so a reply does not wait a turn for
            # the batch. Nothing is pending, so no earlier line can be overtaken.
            writer.write(data)
            self._wrote_this_turn = True
            asyncio.get_running_loop().call_soon(self._turn_ended)
        else:
            if not self._pending:
                asyncio.get_running_loop().call_soon(self._flush)
            self._pending.append(data)
            self._pending_bytes += len(data)
        waiting = self._pending_bytes + writer.transport.get_write_buffer_size()
        if waiting < FLUSH_BYTES and not self._lock.locked():
            return
        # a burst, or a client that reads slowly: write now and wait for room in the pipe
        async with self._lock:
            self._flush()
            await writer.drain()

    def _turn_ended(self) -> None:
        self._wrote_this_turn = False

    def _flush(self) -> None:
        if self._pending and self._writer is not None:
            data = b"".join(self._pending)
            self._pending.clear()
            self._pending_bytes = 0
            self._writer.write(data)

    def _write_blocking(self, data: bytes) -> None:
        self._stream.write(data)
        self._stream.flush()

    def close(self) -> None:
        if self._writer is not None:
            self._flush()
            self._writer.close()


async def _open_reader(stream: BinaryIO) -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stream)
    except (ValueError, OSError):
        # A regular file on stdin (`server < requests.jsonl`): feed it from a thread.
        async def pump() -> None:
            while chunk := await asyncio.to_thread(stream.readline):
                reader.feed_data(chunk)
            reader.feed_eof()

        reader._bothost_pump = asyncio.ensure_future(pump())  # type: ignore[attr-defined]
    return reader


def _claim_stdout() -> BinaryIO:
    """The protocol stream, after making fd 1 and `sys.stdout` point at stderr."""
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return protocol


async def serve_stdio(server: Server) -> None:
    """Serve one client on stdin/stdout until stdin closes."""
    writer = StdoutWriter(_claim_stdout())
    await writer.open()
    reader = await _open_reader(sys.stdin.buffer)
    session = server.open_session(writer.send)
    logger.info("%s %s serving on stdio", server.name, server.version)
    try:
        while True:
            try:
                line = await reader.readline()
            except ValueError:
                await writer.send(_parse_error("message longer than the line limit"))
                continue
            if not line:
                break
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError as exc:
                await writer.send(_parse_error(f"invalid JSON: {exc}"))
                continue
            for item in message if isinstance(message, list) else [message]:
                try:
                    session.receive(item)
                except Exception:  # boundary: one odd message must not end the session
                    logger.exception("could not handle message %.200r", item)
        running = session.in_flight
        if running:
            await asyncio.wait(running, timeout=EOF_GRACE_SECONDS)
    finally:
        logger.info("stdin closed; %s stopping", server.name)
        await server.stop()
        writer.close()


def _parse_error(message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": message}}
