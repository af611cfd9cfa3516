"""The kit's stdout writer: lines of one loop turn share a write, in order, and a client that
stops reading holds the senders instead of growing the server's memory."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from bothost.mcp_servers.kit.stdio import FLUSH_BYTES, StdoutWriter, encode_line

from tests.helpers import until

MESSAGES = 20_000  # ~1.3 MB of lines: far more than a pipe, the transport and a flush hold
PIPE_AND_BUFFERS = 1024 * 1024 + 4 * FLUSH_BYTES  # a pipe holds 64 KiB to 1 MiB on Linux


def note(n: int) -> dict:
    return {"jsonrpc": "2.0", "method": "event/n", "params": {"id": f"e{n}"}}


async def test_a_client_that_stops_reading_holds_the_senders_and_loses_nothing():
    read_end, write_end = os.pipe()
    writer = StdoutWriter(os.fdopen(write_end, "wb", buffering=0))
    await writer.open()
    sent = 0

    async def flood() -> None:
        nonlocal sent
        for n in range(MESSAGES):
            await writer.send(note(n))
            sent += 1

    task = asyncio.ensure_future(flood())
    transport = None
    try:
        await until(lambda: writer._lock.locked())  # waiting for room in a full pipe
        assert sent * len(json.dumps(note(MESSAGES))) < PIPE_AND_BUFFERS
        reader = asyncio.StreamReader(limit=2**20)
        loop = asyncio.get_running_loop()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_end, "rb")
        )
        got = []
        async with asyncio.timeout(30):
            while len(got) < MESSAGES:
                got.append(json.loads(await reader.readline())["params"]["id"])
        await task
        assert got == [f"e{n}" for n in range(MESSAGES)]
    finally:
        task.cancel()
        writer.close()
        if transport is not None:
            transport.close()


def _readable(fd: int) -> bytes:
    """What the pipe holds now, without waiting."""
    os.set_blocking(fd, False)
    try:
        return os.read(fd, 2**20)
    except BlockingIOError:
        return b""


async def test_a_reply_alone_in_its_turn_is_written_at_once_and_a_burst_after_it_in_one_write(
    monkeypatch,
):
    # A reply used to wait for the next loop turn (the batch's flush): one turn of latency
    # on every call (issue 19). Only what follows the first message of a turn is batched.
    read_end, write_end = os.pipe()
    writes = []
    real_write = os.write

    def counted(fd: int, data: bytes) -> int:
        if fd == write_end:
            writes.append(data.count(b"\n"))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", counted)
    writer = StdoutWriter(os.fdopen(write_end, "wb", buffering=0))
    await writer.open()
    try:
        await writer.send(note(0))
        assert _readable(read_end) == json.dumps(note(0), separators=(",", ":")).encode() + b"\n"
        for n in range(1, 100):  # a watcher's burst, in the same turn
            await writer.send(note(n))
        got = b""
        async with asyncio.timeout(5):
            while got.count(b"\n") < 99:
                await asyncio.sleep(0)  # let the loop turn: the batch goes out then
                got += _readable(read_end)
        assert [json.loads(line)["params"]["id"] for line in got.splitlines()] == [
            f"e{n}" for n in range(1, 100)
        ]
        assert writes == [1, 99]
    finally:
        writer.close()
        os.close(read_end)


@pytest.mark.parametrize(
    "message",
    [
        note(7),
        {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {"text": 'café \u2028 \x00 "q"', "n": [1, 2.5, None]},
        },
        {"jsonrpc": "2.0", "method": "m", "params": {"deep": [[{"a": {}}]], "t": True}},
    ],
)
def test_a_line_is_what_json_dumps_writes_compact(message):
    expected = json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n"
    assert encode_line(message) == expected.encode()


def test_a_value_json_cannot_write_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        encode_line({"jsonrpc": "2.0", "method": "m", "params": {"s": {1}}})
