"""The signed events route served directly by the listener (bothost.http.direct), past the app's
router, middlewares and on_response_prepare: every protection the app gave it still holds
there, on a started host (raw sockets where a client library would tidy the request)."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import web
from bothost.plugins.web.security import DEFAULT_HEADERS

from bothost.hookspecs import hookimpl
from bothost.http.direct import Dispatch
from bothost.store.errors import StoreBusyError
from tests.helpers import make_host
from tests.web.conftest import base_url, host_config, signed

EVENTS = "/webhook/events/ops"


@pytest.fixture
async def host(home, tmp_path, secret):
    """A started host with webhooks on, a 2000-byte body limit and a 0.5 s body deadline."""
    config = host_config(
        tmp_path, secret, platforms={"webhook": {"secret": secret, "max_body": 2000}}
    )
    made = make_host(home, config)
    made.http.guard.body_timeout = 0.5
    await made.start(mcp=False, tick=False)
    yield made
    await made.stop()


async def events(host) -> list[tuple]:
    return await host.store.run(
        lambda db: db.execute("SELECT source, dedupe_key FROM events ORDER BY id").fetchall()
    )


def raw_request(secret: str, data, msg_id: str, path: str = EVENTS, extra: bytes = b"") -> bytes:
    body, headers = signed(secret, data, msg_id=msg_id)
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}Content-Length: {len(body)}\r\n".encode()
        + extra
        + b"\r\n"
        + body
    )


async def exchange(port: int, data: bytes, answers: int = 1) -> list[bytes]:
    """Send ``data`` on one connection; the head of each of ``answers`` answers read back."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    heads = []
    try:
        async with asyncio.timeout(10):
            for _ in range(answers):
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                heads.append(head + await reader.readexactly(length))
    finally:
        writer.close()
    return heads


def assert_secured(headers) -> None:
    for name, value in DEFAULT_HEADERS.items():
        assert headers.get(name) == value, (name, dict(headers))


async def test_the_events_route_is_served_by_the_listener_not_the_app(host):
    dispatch = host.http.runner.server.request_handler
    assert isinstance(dispatch, Dispatch) and dispatch.prefixes == ("/webhook/events/",)


async def test_every_answer_of_the_direct_route_has_the_security_headers(
    host, client, secret, monkeypatch
):
    url = base_url(host) + EVENTS
    statuses = []

    async def send(body, headers, want):
        async with client.post(url, data=body, headers=headers) as response:
            statuses.append(response.status)
            assert response.status == want, await response.text()
            assert_secured(response.headers)
            if response.status != 417:
                assert "error" in await response.json() or response.status == 200

    body, headers = signed(secret, {"summary": "ok"}, msg_id="msg_once")
    await send(body, headers, 200)
    await send(body, headers, 200)  # the duplicate
    await send(*signed(secret, b"{not json"), 400)
    await send(body, {"Content-Type": "application/json"}, 401)
    await send(*signed(secret, {"summary": "x" * 3000}), 413)
    await send(body, {**headers, "Expect": "something-else"}, 417)

    async def busy(*args):
        raise StoreBusyError("the store is busy")

    monkeypatch.setattr(host, "ingest_webhook_event", busy)
    await send(*signed(secret, {"summary": "busy"}), 503)

    async def broken(*args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(host, "ingest_webhook_event", broken)
    await send(*signed(secret, {"summary": "bug"}), 500)
    assert await events(host) == [("ops", "msg_once")]


async def test_a_body_late_on_the_direct_route_is_a_secured_408(host, secret):
    request = raw_request(secret, {"summary": "late"}, "msg_late")
    (answer,) = await exchange(host.http.port, request[:-5])  # the body's end never comes
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert b"X-Frame-Options: DENY" in answer
    assert host.http.guard.counts["body_timeout"] == 1
    assert await events(host) == []


async def test_pipelined_requests_are_answered_in_order_and_each_queued_once(host, secret):
    requests = [raw_request(secret, {"summary": f"n{n}"}, f"msg_p{n}") for n in range(3)]
    requests.append(requests[0])  # a retry of the first, in the same pipeline
    answers = await exchange(host.http.port, b"".join(requests), answers=4)
    bodies = [json.loads(answer.split(b"\r\n\r\n", 1)[1]) for answer in answers]
    assert all(a.startswith(b"HTTP/1.1 200") for a in answers), answers
    assert [b.get("accepted") for b in bodies[:3]] == [True] * 3
    assert bodies[3] == {"duplicate": True}
    assert [key for _, key in await events(host)] == ["msg_p0", "msg_p1", "msg_p2"]


async def test_expect_100_continue_is_answered_before_the_body(host, secret):
    request = raw_request(
        secret, {"summary": "cont"}, "msg_cont", extra=b"Expect: 100-continue\r\n"
    )
    head, body = request.split(b"\r\n\r\n", 1)
    reader, writer = await asyncio.open_connection("127.0.0.1", host.http.port)
    try:
        writer.write(head + b"\r\n\r\n")
        async with asyncio.timeout(10):
            assert await reader.readuntil(b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
            writer.write(body)
            assert (await reader.readuntil(b"\r\n")).startswith(b"HTTP/1.1 200")
    finally:
        writer.close()
    assert await events(host) == [("ops", "msg_cont")]


@pytest.mark.parametrize(
    "framing",
    [
        b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",  # a chunk size not in hex
        b"Transfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    ],
    ids=["bad-chunk-size", "chunked-and-length", "two-lengths"],
)
async def test_bad_framing_is_refused_before_the_route_and_nothing_is_queued(host, secret, framing):
    _, headers = signed(secret, {"summary": "x"}, msg_id="msg_framing")
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    request = f"POST {EVENTS} HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}".encode() + framing
    (answer,) = await exchange(host.http.port, request)
    assert answer.split(b"\r\n")[0].endswith(b" 400 Bad Request"), answer  # aiohttp's parser
    assert await events(host) == []


async def test_a_chunked_body_over_the_limit_is_a_json_413(host, secret):
    body = json.dumps({"summary": "x" * 3000}).encode()
    _, headers = signed(secret, body, msg_id="msg_big")
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    chunks = b"".join(
        b"%x\r\n%s\r\n" % (len(body[i : i + 500]), body[i : i + 500])
        for i in range(0, len(body), 500)
    )
    request = (
        f"POST {EVENTS} HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}Transfer-Encoding: chunked\r\n\r\n".encode()
        + chunks
        + b"0\r\n\r\n"
    )
    (answer,) = await exchange(host.http.port, request)
    assert answer.startswith(b"HTTP/1.1 413"), answer
    assert b"2000 bytes" in answer and b"X-Frame-Options: DENY" in answer
    assert await events(host) == []


async def test_other_methods_and_paths_still_get_the_apps_answers(host, client, secret):
    body, headers = signed(secret, {"summary": "x"})
    async with client.get(base_url(host) + EVENTS) as response:
        assert response.status == 405
        assert_secured(response.headers)
    for path in ("/webhook/events/ops/", "/webhook/events/", "/webhook/events/a/b"):
        async with client.post(base_url(host) + path, data=body, headers=headers) as response:
            assert response.status == 404, path
            assert_secured(response.headers)
    assert await events(host) == []


async def test_an_encoded_source_is_decoded_as_the_router_would(host, client, secret):
    from yarl import URL

    body, headers = signed(secret, {"summary": "x"}, msg_id="msg_enc")
    url = URL(base_url(host) + "/webhook/events/%6Fps", encoded=True)  # %6F is "o"
    async with client.post(url, data=body, headers=headers) as response:
        assert response.status == 200, await response.text()
    assert await events(host) == [("ops", "msg_enc")]


async def test_without_a_secret_the_direct_route_is_a_secured_404(home, client):
    host = make_host(home)
    await host.start(mcp=False, tick=False)
    try:
        body, headers = signed("whsec_c2VjcmV0", {"summary": "x"})
        async with client.post(base_url(host) + EVENTS, data=body, headers=headers) as response:
            assert response.status == 404
            assert_secured(response.headers)
    finally:
        await host.stop()


async def test_a_direct_prefix_must_be_a_directory_and_registered_once():
    from bothost.api import direct_post

    async def handler(request, segment):
        return web.Response()

    app = web.Application()
    with pytest.raises(ValueError, match="starts and ends"):
        direct_post(app, "/hooks", handler)
    direct_post(app, "/hooks/", handler)
    with pytest.raises(ValueError, match="exists already"):
        direct_post(app, "/hooks/", handler)


class ExtraHeader:
    """A plugin declaring one more header for every answer (bothost.api.answer_headers)."""

    @hookimpl
    def register_routes(self, app):
        from bothost.api import answer_headers

        answer_headers(app, {"X-Extra": "declared", "X-Frame-Options": "SAMEORIGIN"})


async def test_the_direct_routes_answers_carry_every_declared_answer_header(
    home, tmp_path, secret, client
):
    config = host_config(tmp_path, secret, platforms={"webhook": {"secret": secret}})
    host = make_host(home, config, plugins=[ExtraHeader()])
    await host.start(mcp=False, tick=False)
    try:
        url = base_url(host) + EVENTS
        body, headers = signed(secret, {"summary": "ok"}, msg_id="msg_extra")
        for data, sent, want in (
            (body, headers, 200),
            (body, {"Content-Type": "application/json"}, 401),
            (*signed(secret, b"{not json"), 400),
        ):
            async with client.post(url, data=data, headers=sent) as response:
                assert response.status == want, await response.text()
                assert response.headers.get("X-Extra") == "declared", dict(response.headers)
                # one source: whichever plugin declared a name last, as on the app's answers
                async with client.get(base_url(host) + "/healthz") as app_answer:
                    frame = app_answer.headers["X-Frame-Options"]
                assert response.headers["X-Frame-Options"] == frame
    finally:
        await host.stop()
