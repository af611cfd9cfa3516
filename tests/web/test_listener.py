"""The HTTP listener's deadlines and connection cap, on a started host (bothost.http.listener)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import subprocess
import sys
import textwrap

import aiohttp
import pytest
from bothost.plugins.web.security import DEFAULT_HEADERS

from bothost.http.listener import Throttle, connection_cap
from tests.faults.http_host import limit_files
from tests.helpers import make_host, until
from tests.web.conftest import host_config


@pytest.fixture
async def small_host(home, tmp_path, secret):
    """A host whose listener keeps at most 4 connections and waits 0.5 s for a request's
    first headers and for a body."""
    host = make_host(home, host_config(tmp_path, secret))
    host.http.guard.cap = 4
    host.http.guard.body_timeout = 0.5
    host.http.guard.header_timeout = 0.5
    await host.start(mcp=False, tick=False)
    yield host
    await host.stop()


async def connect(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port)


async def read_all(reader: asyncio.StreamReader) -> bytes:
    """Everything until the host closes the connection (bounded)."""
    async with asyncio.timeout(10):
        try:
            return await reader.read()
        except ConnectionError:
            return b""


async def test_headers_that_stop_arriving_are_cut_but_a_served_client_keeps_its_connection(
    small_host,
):
    port = small_host.http.port
    slow_reader, slow = await connect(port)
    slow.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: ")
    served_reader, served = await connect(port)
    served.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert (await served_reader.readuntil(b"\r\n")).startswith(b"HTTP/1.1 200")
    assert await read_all(slow_reader) == b""  # closed at the header deadline
    assert small_host.http.guard.counts["header_timeout"] == 1
    assert not served.is_closing() and not served_reader.at_eof()  # keep-alive lasts longer
    slow.close()
    served.close()


async def test_a_body_that_stops_arriving_is_answered_408_and_closed(small_host):
    reader, writer = await connect(small_host.http.port)
    writer.write(
        b"POST /webhook/events/ops HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a": '
    )
    answer = await read_all(reader)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 408")
    assert small_host.http.guard.counts["body_timeout"] == 1


async def test_at_the_cap_a_new_client_evicts_the_oldest_silent_connection(small_host):
    guard = small_host.http.guard
    silent = [await connect(small_host.http.port) for _ in range(4)]
    await until(lambda: guard.open_count() == 4)
    async with aiohttp.ClientSession() as client:
        async with client.get(f"http://127.0.0.1:{small_host.http.port}/healthz") as response:
            assert response.status == 200
    assert await read_all(silent[0][0]) == b""  # the oldest was closed to make room
    assert guard.counts["evicted_idle"] >= 1
    for _, writer in silent:
        writer.close()


async def test_when_every_connection_serves_a_request_a_newcomer_gets_503(small_host, monkeypatch):
    port = small_host.http.port
    streams: list = []
    release = await running_turns(small_host, monkeypatch, streams)
    reader, writer = await connect(port)
    answer = await read_all(reader)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 503") and b"Retry-After: 1" in answer
    release.set()
    for _, stream in streams:
        stream.close()


async def running_turns(host, monkeypatch, streams: list) -> asyncio.Event:
    """Fill a cap of 4 with chat turns that run until the event returned is set: complete
    requests that stay in their handler, no answer begun."""
    release = asyncio.Event()

    async def slow_turn(message, **kwargs):
        await release.wait()

    monkeypatch.setattr(host, "handle_message", slow_turn)
    chat = b'{"session": "s", "text": "hi"}'
    for _ in range(4):
        reader, writer = await connect(host.http.port)
        writer.write(
            b"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(chat), chat)
        )
        streams.append((reader, writer))
    await until(lambda: len(host.http.guard.busy) == 4)
    return release


async def test_at_the_cap_the_oldest_event_stream_makes_room_for_a_newcomer(small_host):
    # found from outside: 2,100 `GET /api/events` streams from one local process (no token
    # is needed on loopback) took every connection of the default cap of 2,048, and
    # /healthz and signed webhooks got 503 for as long as they stayed open; a page's
    # EventSource reconnects by itself, a webhook sender may not retry for minutes
    guard = small_host.http.guard
    port = small_host.http.port
    streams = []
    for _ in range(4):
        reader, writer = await connect(port)
        writer.write(b"GET /api/events?session=s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        await reader.readuntil(b"\r\n\r\n")  # its answer has begun: a stream
        streams.append((reader, writer))
    await until(lambda: len(guard.busy) == 4)
    async with aiohttp.ClientSession() as client:
        async with client.get(f"http://127.0.0.1:{port}/healthz") as response:
            assert response.status == 200
    assert guard.counts["evicted_stream"] == 1
    first = streams[0][0]
    async with asyncio.timeout(10):
        while not first.at_eof():  # the oldest stream was ended (the page reconnects)
            try:
                await first.read(65536)
            except ConnectionError:
                break
    for _, stream in streams:
        stream.close()


def stalled_reader(port: int) -> socket.socket:
    """A client that pipelines many requests for a large answer and never reads: a tiny
    receive window, so the host's answers pile up in its send buffer."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.connect(("127.0.0.1", port))
    sock.sendall(b"GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 400)
    return sock


async def test_at_the_cap_a_client_that_never_reads_its_answers_is_cut_for_a_newcomer(
    small_host,
):
    # found from outside: four (at the default cap, 2,048) connections that each pipelined
    # 400 requests and never read an answer were never evicted (a request was always
    # waiting), so every other client -- /healthz, webhook senders -- got 503 for as long
    # as the attacker kept the sockets open; /openapi.json needs no token on any bind
    guard = small_host.http.guard
    port = small_host.http.port
    stalled = [await asyncio.to_thread(stalled_reader, port) for _ in range(4)]
    await until(lambda: sum(h.writing_paused for h in guard.live()) == 4, timeout=20)
    async with aiohttp.ClientSession() as client:
        async with client.get(f"http://127.0.0.1:{port}/healthz") as response:
            assert response.status == 200
    assert guard.counts["evicted_stalled"] == 1
    await until(lambda: len(small_host.http.guard.server.connections) <= 4)  # freed at once
    for sock in stalled:
        sock.close()


async def test_a_client_that_takes_none_of_its_answers_is_cut_at_the_send_deadline(small_host):
    # found from outside: below the cap, a connection whose client pipelined requests and
    # never read kept its descriptor, aiohttp's buffer and up to megabytes of kernel socket
    # memory for as long as the client liked (nothing timed a write)
    guard = small_host.http.guard
    guard.send_timeout = 0.2
    port = small_host.http.port
    stalled = await asyncio.to_thread(stalled_reader, port)
    await until(lambda: any(h.writing_paused for h in guard.live()), timeout=20)
    await until(lambda: not guard.server.connections, timeout=20)
    assert guard.counts["send_timeout"] == 1
    stalled.close()


def test_the_cap_leaves_half_the_open_files_to_the_rest_of_the_process():
    assert connection_cap(1024) == 512
    assert connection_cap(64) == 32  # a floor: one page, its stream and webhooks still fit
    assert connection_cap(1 << 20) == 2048


ACCEPT_FLOOD = textwrap.dedent("""
    import asyncio, logging, sys
    from bothost.http.listener import AcceptErrors

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    async def main():
        loop = asyncio.get_running_loop()
        AcceptErrors.install(loop, interval=0.5)
        held = []

        class Hold(asyncio.Protocol):
            def connection_made(self, transport):
                held.append(transport)

        server = await loop.create_server(Hold, "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        await loop.run_in_executor(None, sys.stdin.read)
        server.close()
        await asyncio.sleep(1.5)  # asyncio retries a failed accept after 1 s: let them fail

    asyncio.run(main())
""")


async def test_accept_failures_are_one_counted_line_per_interval_never_tracebacks(tmp_path):
    stderr_path = tmp_path / "stderr"
    with open(stderr_path, "wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-c", ACCEPT_FLOOD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            preexec_fn=lambda: limit_files(48),
            env={**os.environ, "PYTHONPATH": os.getcwd()},
        )
    assert process.stdout is not None and process.stdin is not None
    port = int(await asyncio.to_thread(process.stdout.readline))
    sockets = []
    try:
        for _ in range(200):  # far beyond 48 descriptors
            sock = socket.socket()
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", port))
            sockets.append(sock)

        def lines() -> list[str]:
            return [
                line for line in stderr_path.read_text().splitlines() if "accept failed" in line
            ]

        await until(lambda: len(lines()) >= 2, timeout=20)  # the first, then a count
        assert "more time(s)" in lines()[1]
    finally:
        for sock in sockets:
            sock.close()
        process.stdin.close()
        process.stdout.close()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            process.wait(10)
    log = stderr_path.read_text()
    assert "Traceback" not in log and "out of system resource" not in log
    assert len(log.splitlines()) < 20


async def test_a_request_aiohttp_cannot_parse_is_one_warning_line_per_interval_no_traceback(
    small_host, caplog
):
    # found from outside: every request with a header line over 8 KiB (or a bad
    # Content-Length, a NUL in the method, ...) was logged by aiohttp as ERROR with an
    # 11-line traceback; any client could fill the host's log with them
    now = [1000.0]
    small_host.http.guard.bad_requests.throttle.clock = lambda: now[0]

    async def malformed() -> bytes:
        reader, writer = await connect(small_host.http.port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"a" * 9000 + b"\r\n\r\n")
        answer = await read_all(reader)
        writer.close()
        return answer

    caplog.set_level(logging.DEBUG)
    for _ in range(3):
        assert (await malformed()).startswith(b"HTTP/1.0 400")
    now[0] += 61
    assert (await malformed()).startswith(b"HTTP/1.0 400")
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert all(r.exc_info is None and r.exc_text is None for r in caplog.records)
    assert [r.levelname for r in lines] == ["WARNING", "WARNING"], [r.getMessage() for r in lines]
    assert "malformed HTTP request" in lines[0].getMessage()
    assert "2 more since" in lines[1].getMessage() and "\n" not in lines[1].getMessage()
    assert small_host.http.guard.counts["bad_request"] == 4


def test_a_throttle_logs_the_first_at_once_then_one_line_per_interval_with_the_count():
    now = [100.0]
    throttle = Throttle(60.0, clock=lambda: now[0])
    assert throttle.due() == 0  # the first: at once, nothing unlogged before it
    assert [throttle.due() for _ in range(3)] == [None, None, None]
    now[0] += 59.9
    assert throttle.due() is None
    now[0] += 0.1
    assert throttle.due() == 4  # the four counted since the last line
    assert throttle.due() is None


# found from outside: a request aiohttp's parser refused got its plain-text 400 without the
# headers every other answer carries (no nosniff, no frame-ancestors), on the app's paths
# and on the direct webhook route alike; so did the 503 at the connection cap
MALFORMED = {
    "bad-request-line": b"GET /healthz HTTP/1.1 extra\r\nHost: 127.0.0.1\r\n\r\n",
    "bad-chunk-size": b"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked"
    b"\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    "oversize-header": b"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"a" * 9000 + b"\r\n\r\n",
    "two-lengths": b"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n"
    b"Content-Length: 3\r\n\r\n{}",
    "nul-in-method": b"G\x00T {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
}


def head_fields(answer: bytes) -> dict[str, str]:
    head = answer.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")[1:]
    return dict(line.split(": ", 1) for line in head)


@pytest.mark.parametrize("path", ["/healthz", "/webhook/events/ops"], ids=["app", "direct"])
@pytest.mark.parametrize("kind", list(MALFORMED))
async def test_a_malformed_request_gets_a_400_with_the_security_headers(small_host, path, kind):
    reader, writer = await connect(small_host.http.port)
    writer.write(MALFORMED[kind].replace(b"{path}", path.encode()))
    answer = await read_all(reader)
    writer.close()
    assert answer.split(b"\r\n")[0].endswith(b" 400 Bad Request"), answer
    fields = head_fields(answer)
    for name, value in DEFAULT_HEADERS.items():
        assert fields.get(name) == value, (name, answer)
    assert small_host.http.guard.counts["bad_request"] == 1


async def test_the_503_at_the_cap_carries_the_security_headers(small_host, monkeypatch):
    streams: list = []
    release = await running_turns(small_host, monkeypatch, streams)
    reader, writer = await connect(small_host.http.port)
    answer = await read_all(reader)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 503"), answer
    fields = head_fields(answer)
    assert fields["Retry-After"] == "1" and fields["Content-Length"] == str(
        len(answer.partition(b"\r\n\r\n")[2])
    )
    for name, value in DEFAULT_HEADERS.items():
        assert fields.get(name) == value, (name, answer)
    release.set()
    for _, stream in streams:
        stream.close()


HUGE = 2**30  # a Content-Length far past every limit: a sender offering a gigabyte


async def send_forever(writer: asyncio.StreamWriter) -> None:
    """Keep sending body bytes, as a sender that ignores our answer does, until cut."""
    chunk = b"x" * 65536
    try:
        while True:
            writer.write(chunk)
            await writer.drain()
    except ConnectionError:
        return


@pytest.mark.parametrize("path", ["/api/chat", "/webhook/events/ops"])
async def test_a_body_over_the_limit_is_refused_413_unread_and_the_connection_closed(
    small_host, path
):
    """Found from outside: /api/chat read 4 MiB before its 413, and after any early answer
    aiohttp went on reading (and dropping) the body for 10 s to keep the connection."""
    small_host.http.guard.body_timeout = 120  # only the 413 may end this, not the 408
    reader, writer = await connect(small_host.http.port)
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {HUGE}\r\n\r\n".encode()
    )
    async with asyncio.timeout(10):  # not one body byte was sent: the answer needs none
        head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), head
    fields = {name.lower(): value for name, value in head_fields(head).items()}
    assert fields.get("connection") == "close", head
    sending = asyncio.ensure_future(send_forever(writer))
    await read_all(reader)  # closed: the rest of the gigabyte is not read
    await asyncio.wait_for(sending, 10)
    writer.close()
