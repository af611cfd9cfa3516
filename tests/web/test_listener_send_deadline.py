"""The send deadline judges a client by the bytes it took, not by how many wait unsent.

Found by reading bothost/http/listener.py: a sweep cut a connection whose writes were paused when
its unsent byte count equalled the last sweep's. A slow but steady reader of a stream that
is written to as it reads can have the same count at two sweeps while it takes bytes all
along; it was cut.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from bothost.http.listener import ConnectionGuard
from tests.helpers import until

BACKLOG_BYTES = 4 * 1024 * 1024  # far above the kernel's buffers: the writes stay paused


@pytest.fixture
async def guarded() -> AsyncIterator[tuple[ConnectionGuard, int]]:
    """A listener whose ``/stream`` begins an answer and holds it open; its sweeps are the
    test's to make (the guard's own timer is an hour away)."""
    held = asyncio.Event()

    async def stream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await held.wait()
        return response

    guard = ConnectionGuard(send_timeout=3600)
    app = web.Application(middlewares=[guard.middleware])
    app.router.add_get("/stream", stream)
    runner = web.AppRunner(app, handle_signals=False, **guard.handler_options())
    await runner.setup()
    assert runner.server is not None
    guard.attach(runner.server)
    listener = await asyncio.get_running_loop().create_server(guard.factory, "127.0.0.1", 0)
    try:
        yield guard, listener.sockets[0].getsockname()[1]
    finally:
        held.set()
        guard.close()
        listener.close()
        await runner.cleanup()


def slow_client(port: int) -> socket.socket:
    """A client with a small receive window that asks for the stream and reads nothing yet."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(b"GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    return sock


async def test_a_slow_reader_with_the_same_unsent_count_at_two_sweeps_is_kept(guarded):
    guard, port = guarded
    client = await asyncio.to_thread(slow_client, port)
    try:
        await until(lambda: len(guard.busy) == 1)
        (handler,) = guard.busy
        transport = handler.transport
        transport.write(b"x" * BACKLOG_BYTES)  # the stream's answer, piling up unread
        await until(lambda: handler.writing_paused)
        guard.sweep()
        unsent = transport.get_write_buffer_size()
        # the client reads on, until some of what waited has left the host
        while transport.get_write_buffer_size() == unsent:
            await asyncio.to_thread(client.recv, 65536)
            await asyncio.sleep(0.05)  # a poll: the kernel moves the bytes on its own time
        # the stream writes on meanwhile, as much as was taken: the same count waits
        transport.write(b"x" * (unsent - transport.get_write_buffer_size()))
        assert transport.get_write_buffer_size() == unsent and handler.writing_paused
        guard.sweep()
        assert guard.counts["send_timeout"] == 0  # before: 1, a reader cut for being slow
        assert not transport.is_closing()

        # the same client stops reading: cut once a whole sweep passes with nothing taken
        def swept_out() -> bool:
            guard.sweep()
            return guard.counts["send_timeout"] == 1

        await until(swept_out)
        assert transport.is_closing()
    finally:
        client.close()
