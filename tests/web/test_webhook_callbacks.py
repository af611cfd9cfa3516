"""``callback_url`` of ``/webhook/message``: the host POSTs a reply wherever a signed
request says, so an internal address (loopback, link-local such as the cloud metadata
service at 169.254.169.254, RFC 1918, IPv6 ULA, IPv4-mapped IPv6…) is refused unless
``platforms.webhook.callback_allow`` lists its network. The address is checked where the
connection is made, so a name that resolves anew (DNS rebinding) or a redirect cannot
reach what the check at the request refused."""

from __future__ import annotations

import asyncio
import logging

import aiohttp
import pytest
from aiohttp import web

from tests.helpers import make_host
from tests.web.conftest import base_url, host_config, signed
from tests.web.test_webhooks import Receiver, post

INTERNAL = [
    "http://127.0.0.1:{port}/hook",
    "http://localhost:{port}/hook",  # a name: refused for what it resolves to
    "http://2130706433:{port}/hook",  # 127.0.0.1 written as one number
    "http://0.0.0.0:{port}/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://10.1.2.3/hook",
    "http://172.16.0.1/hook",
    "http://192.168.1.1/hook",
    "http://100.64.0.1/hook",  # carrier-grade NAT, shared address space
    "http://[::1]:{port}/hook",
    "http://[fd00::1]/hook",
    "http://[fe80::1]/hook",
    "http://[::ffff:127.0.0.1]:{port}/hook",
    "http://[::ffff:169.254.169.254]/hook",
    "http://[64:ff9b::a9fe:a9fe]/hook",  # NAT64 of 169.254.169.254
    "http://224.0.0.1/hook",
]


async def start_host(home, tmp_path, secret, **webhook):
    data = host_config(tmp_path, secret)
    data["platforms"]["webhook"].update(webhook)
    host = make_host(home, data)
    await host.start(mcp=False, tick=False)
    return host


@pytest.fixture
async def client():
    async with aiohttp.ClientSession() as session:
        yield session


@pytest.fixture
async def guarded_host(home, tmp_path, secret):
    host = await start_host(home, tmp_path, secret)
    yield host
    await host.stop()


async def test_an_internal_callback_url_is_refused_before_anything_runs(
    guarded_host, client, secret
):
    async with Receiver(secret) as receiver:
        port = receiver.url.split(":")[2].split("/")[0]
        for url in INTERNAL:
            target = url.format(port=port)
            body, headers = signed(
                secret, {"text": "help", "user": "bob", "callback_url": target}, msg_id="msg_x"
            )
            status, answer = await post(client, guarded_host, "/webhook/message", body, headers)
            assert status == 400, (target, answer)
            assert "callback_url" in answer["error"] and "internal" in answer["error"], answer
            if "localhost" in target:  # what our resolver knows stays ours
                assert "127.0.0.1" not in answer["error"] and "::1" not in answer["error"]
        # nothing was claimed: the same id with no callback runs
        body, headers = signed(secret, {"text": "help", "user": "bob"}, msg_id="msg_x")
        status, answer = await post(client, guarded_host, "/webhook/message", body, headers)
        assert status == 200 and "reply" in answer
    assert receiver.attempts == 0


async def test_an_allowlisted_internal_network_gets_its_signed_reply(
    home, tmp_path, client, secret
):
    host = await start_host(home, tmp_path, secret, callback_allow=["127.0.0.0/8"])
    try:
        async with Receiver(secret) as receiver:
            data = {"text": "help", "user": "bob", "callback_url": receiver.url}
            body, headers = signed(secret, data, msg_id="msg_cb")
            status, answer = await post(client, host, "/webhook/message", body, headers)
            assert (status, answer) == (202, {"accepted": True, "id": "msg_cb"})
            async with asyncio.timeout(10):
                await receiver.arrived.wait()
            # the allowlist names networks: ::1 is not in 127.0.0.0/8
            data["callback_url"] = receiver.url.replace("127.0.0.1", "[::1]")
            body, headers = signed(secret, data)
            status, answer = await post(client, host, "/webhook/message", body, headers)
            assert status == 400 and "internal" in answer["error"]
    finally:
        await host.stop()
    [(reply_id, reply)] = receiver.received
    assert reply_id.startswith("rpl_") and reply["in_reply_to"] == "msg_cb"


async def test_the_address_is_checked_where_the_connection_is_made(secret):
    """What the request's check saw is not trusted at delivery: a name may resolve anew
    (DNS rebinding), and an address literal never reaches a resolver at all."""
    from bothost.plugins.web import callback

    async with Receiver(secret) as receiver:
        async with callback.session(allow=[]) as session:
            with pytest.raises(aiohttp.ClientConnectionError, match="internal"):
                await session.post(receiver.url, data=b"{}")
            localhost = receiver.url.replace("127.0.0.1", "localhost")
            with pytest.raises(aiohttp.ClientConnectionError, match="internal"):
                await session.post(localhost, data=b"{}")
    assert receiver.attempts == 0


async def test_a_redirect_from_the_callback_is_not_followed(home, tmp_path, client, secret):
    hits = []

    async def moved(request):
        hits.append("moved")
        raise web.HTTPTemporaryRedirect(f"{base_url(host)}/webhook/message")

    app = web.Application()
    app.router.add_post("/hook", moved)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    host = await start_host(home, tmp_path, secret, callback_allow=["127.0.0.1/32"])
    try:
        data = {"text": "help", "user": "bob", "callback_url": f"http://127.0.0.1:{port}/hook"}
        body, headers = signed(secret, data)
        status, _ = await post(client, host, "/webhook/message", body, headers)
        assert status == 202
        async with asyncio.timeout(10):
            while not any(k[0] == "callback" for k in webhook_counters(host)):
                await asyncio.sleep(0.02)
        assert webhook_counters(host)[("callback", "failed")] == 1
        assert hits == ["moved"]  # once: a 307 is an answer, not a new target
    finally:
        await host.stop()
        await runner.cleanup()


def webhook_counters(host):
    """The webhook routes' counters, as /metrics reads them."""
    for route in host.http.app.router.routes():
        handler = getattr(route.handler, "__self__", None)
        if handler is not None and hasattr(handler, "counters") and hasattr(handler, "replies"):
            return handler.counters
    raise AssertionError("no webhook routes")


@pytest.mark.parametrize("value", ["10.0.0.0/33", "not a network", "10.0.0.1/8"])
def test_a_bad_allowlist_entry_is_a_config_error(home, tmp_path, secret, value):
    from bothost.config import ConfigError

    data = host_config(tmp_path, secret)
    data["platforms"]["webhook"]["callback_allow"] = [value]
    with pytest.raises(
        ConfigError, match=r"platforms\.webhook: callback_allow\[0\]: expected a network"
    ):
        make_host(home, data)


@pytest.mark.parametrize(
    "webhook,path,expected",
    [
        # found from outside: each of these loaded, doctor said ok, then every webhook got a
        # 500 (ValueError in the signature check) or every briefing failed at delivery
        ({"secret": "whsec_!!not base64"}, r"platforms\.webhook: secret", "base64"),
        (
            {"targets": {"ops": {"url": "https://ops.example/hook", "secret": "whsec_??"}}},
            r"platforms\.webhook\.targets\.ops: secret",
            "base64",
        ),
        (
            {"targets": {"ops": {"url": "not a url"}}},
            r"platforms\.webhook\.targets\.ops: url",
            "http",
        ),
        (
            {"targets": {"ops": {"url": "ftp://ops.example/"}}},
            r"platforms\.webhook\.targets\.ops: url",
            "http",
        ),
        (
            {"targets": {"ops": {"url": "https:///hook"}}},
            r"platforms\.webhook\.targets\.ops: url",
            "http",
        ),
    ],
)
def test_a_bad_webhook_secret_or_target_url_is_a_config_error(
    home, tmp_path, secret, webhook, path, expected
):
    from bothost.config import ConfigError

    data = host_config(tmp_path, secret)
    data["platforms"]["webhook"].update(webhook)
    with pytest.raises(ConfigError, match=path) as err:
        make_host(home, data)
    assert expected in str(err.value)
    assert "whsec_!!" not in str(err.value) and "whsec_??" not in str(err.value)  # secrets


async def test_a_name_that_resolves_anew_to_an_internal_address_gets_no_reply(
    guarded_host, client, secret, monkeypatch, caplog
):
    """DNS rebinding: the check at the request saw a public address, the name now points
    at loopback. The delivery's own check refuses it, once (no retries)."""
    from bothost.plugins.web import callback

    async def public(url, allow):  # what the request's lookup saw
        return None

    monkeypatch.setattr(callback, "problem", public)
    caplog.set_level(logging.INFO, logger="bothost")
    async with Receiver(secret) as receiver:
        url = receiver.url.replace("127.0.0.1", "localhost")
        body, headers = signed(secret, {"text": "help", "user": "bob", "callback_url": url})
        status, _ = await post(client, guarded_host, "/webhook/message", body, headers)
        assert status == 202
        async with asyncio.timeout(10):
            while not webhook_counters(guarded_host)[("callback", "failed")]:
                await asyncio.sleep(0.02)
    assert receiver.attempts == 0
    assert "internal address" in caplog.text and "retrying" not in caplog.text


async def test_a_body_with_a_key_written_twice_is_refused_on_every_json_route(
    guarded_host, client, secret
):
    """A signature covers the bytes; if a proxy or the sender's own validator reads the first
    `user` and we the last, the two disagree on what was signed."""
    twice = b'{"text": "help", "user": "bob", "user": "admin"}'
    for path in ("/webhook/message", "/webhook/events/ops"):
        body, headers = signed(secret, twice)
        status, answer = await post(client, guarded_host, path, body, headers)
        assert status == 400 and "repeats the key 'user'" in answer["error"], (path, answer)
    async with client.post(
        base_url(guarded_host) + "/api/chat",
        data=b'{"session": "s1", "session": "s2", "text": "help"}',
        headers={"Content-Type": "application/json"},
    ) as response:
        assert response.status == 400
        assert "repeats the key 'session'" in (await response.json())["error"]
