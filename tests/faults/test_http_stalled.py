"""Slow and stalled HTTP clients against a real ``bothost run`` with 1,024 open files.

A client that opens connections and never finishes its request headers must not take the
listener down: with 2,000 such connections held open, ``/healthz`` and signed webhooks
still answer, the host's stderr stays small (no "Too many open files" traceback per
accept), and connections that stall are closed, freeing their descriptors.
"""

from __future__ import annotations

import asyncio
import socket

import aiohttp
import pytest

from tests.faults.http_host import HOST_NOFILE, RunningHost, raise_own_file_limit

STALLED = 2000  # about twice the host's 1,024 descriptors
PARTIAL_HEADER = b"POST /webhook/events/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le"
MAX_STDERR = 64 * 1024  # a few summary lines; the bug wrote 59 MB in 80 s


async def stall(port: int, index: int) -> socket.socket:
    """A connection that sends nothing, or half a request header, and then waits."""
    loop = asyncio.get_running_loop()
    sock = socket.socket()
    sock.setblocking(False)
    try:
        async with asyncio.timeout(20):
            await loop.sock_connect(sock, ("127.0.0.1", port))
            if index % 2:
                await loop.sock_sendall(sock, PARTIAL_HEADER)
    except (TimeoutError, OSError):
        pass  # refused or still in the backlog: held all the same
    return sock


@pytest.fixture
async def host(home, tmp_path):
    running = RunningHost(home, tmp_path)
    await running.start()
    yield running
    running.stop()


async def test_healthz_and_webhooks_answer_while_2000_connections_stall(host):
    raise_own_file_limit(STALLED + 512)
    sockets = await asyncio.gather(*(stall(host.port, i) for i in range(STALLED)))
    try:
        async with aiohttp.ClientSession() as session:
            status, _, health = await host.healthz(session)
            assert status == 200 and health["ok"] is True
            status, _, answer = await host.webhook(
                session, {"summary": "still here"}, msg_id="msg_stalled_1"
            )
            assert status == 200 and answer["accepted"] is True
            # the host stays inside its own descriptor limit while they are held
            assert host.open_fds() < HOST_NOFILE
    finally:
        for sock in sockets:
            sock.close()
    log = host.stderr()
    assert "Traceback" not in log
    assert len(log.encode()) < MAX_STDERR


async def test_a_connection_that_never_sends_its_headers_is_closed(host):
    loop = asyncio.get_running_loop()
    sockets = await asyncio.gather(*(stall(host.port, i) for i in range(20)))
    try:
        for sock in sockets:  # each read ends in EOF (or a reset) once the host gives up
            async with asyncio.timeout(60):
                try:
                    while await loop.sock_recv(sock, 4096):
                        pass
                except ConnectionError:
                    pass
    finally:
        for sock in sockets:
            sock.close()
    async with asyncio.timeout(10):  # and their descriptors are freed
        while host.open_fds() > 100:
            await asyncio.sleep(0.05)
