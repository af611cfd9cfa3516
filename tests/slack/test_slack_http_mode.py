"""Slack's HTTP Events API on the host's own listener: signed requests only."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import subprocess
import sys
import time
from urllib.parse import urlencode

import aiohttp
from slack_sdk.signature import SignatureVerifier

from bothost.models import Address
from tests.conftest import both_backends
from tests.helpers import until
from tests.slack.fake_slack import BOT_USER, FakeSlack
from tests.slack.harness import ALICE, GENERAL, SECRET


def signed(body: bytes, secret: str = SECRET, timestamp: int | None = None) -> dict[str, str]:
    ts = str(timestamp or int(time.time()))
    return {
        "X-Slack-Request-Timestamp": ts,
        "Content-Type": "application/json",
        "X-Slack-Signature": SignatureVerifier(secret).generate_signature(timestamp=ts, body=body),
    }


async def post(bot, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
    url = f"http://127.0.0.1:{bot.host.http.port}/slack/events"
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, data=body, headers=headers) as response,
    ):
        return response.status, await response.text()


def mention(bot, text: str) -> tuple[bytes, str]:
    ts = bot.fake.add_message(GENERAL, ALICE, f"<@{BOT_USER}> {text}")
    event = {
        "type": "app_mention",
        "user": ALICE,
        "text": f"<@{BOT_USER}> {text}",
        "ts": ts,
        "channel": GENERAL,
        "event_ts": ts,
    }
    return json.dumps(FakeSlack.event_payload(event)).encode(), ts


async def test_signed_event_is_answered(start_bot):
    bot = await start_bot({"mode": "http", "app_token": None})
    assert bot.platform.socket is None
    body, ts = mention(bot, "help")
    status, _ = await post(bot, body, signed(body))
    assert status == 200
    await bot.wait_reply(GENERAL, ts, "offline agent")


@both_backends
async def test_a_retry_that_reaches_another_host_or_a_restarted_one_runs_no_second_turn(
    start_bot, backend, store_target, tmp_path, caplog
):
    """Slack retries an event it thinks was lost (``X-Slack-Retry-Num``), and the retry may
    reach another host sharing the store (PostgreSQL) or this host after a restart (SQLite,
    one host per file): the event was taken already, so no second turn runs."""
    caplog.set_level(logging.INFO, logger="bothost.plugins.slack.events")
    store = {"store": {"url": store_target}} if isinstance(store_target, str) else {}
    first = await start_bot({"mode": "http", "app_token": None}, **store)
    body, ts = mention(first, "help")
    if backend == "sqlite":
        status, _ = await post(first, body, signed(body))
        assert status == 200
        await first.wait_reply(GENERAL, ts, "offline agent")
        await first.host.stop()
        second = await start_bot({"mode": "http", "app_token": None})
        status, _ = await post(second, body, {**signed(body), "X-Slack-Retry-Num": "1"})
        assert status == 200
    else:
        other = tmp_path / "home2"
        other.mkdir(mode=0o700)
        second = await start_bot({"mode": "http", "app_token": None}, bot_home=other, **store)
        retry = {**signed(body), "X-Slack-Retry-Num": "1"}
        answers = await asyncio.gather(post(first, body, signed(body)), post(second, body, retry))
        assert [status for status, _ in answers] == [200, 200]
        await first.wait_reply(GENERAL, ts, "offline agent")
    await until(
        lambda: (
            "was taken already" in caplog.text  # the retry was seen and left alone
            or first.thread(GENERAL, ts).count("offline agent") > 1
        )  # or it ran a second turn
    )
    said = await second.host.queries.transcript(Address("slack", GENERAL, ts))
    assert [m.role for m in said if m.role == "user"] == ["user"], said
    assert first.thread(GENERAL, ts).count("offline agent") == 1


async def test_forged_or_stale_signature_is_refused(start_bot):
    bot = await start_bot({"mode": "http"})
    body, ts = mention(bot, "help")
    status, _ = await post(bot, body, signed(body, secret="not-the-secret"))
    assert status == 401
    status, _ = await post(bot, body, signed(body, timestamp=int(time.time()) - 3600))
    assert status == 401
    tampered = body.replace(b"help", b"tools")
    status, _ = await post(bot, tampered, signed(body))
    assert status == 401
    assert not bot.fake.called("chat.startStream") and not bot.fake.called("chat.postMessage")


async def test_url_verification_challenge(start_bot):
    bot = await start_bot({"mode": "http"})
    body = json.dumps({"type": "url_verification", "challenge": "c-123", "token": "x"}).encode()
    status, text = await post(bot, body, signed(body))
    assert status == 200 and "c-123" in text


async def test_route_is_off_in_socket_mode(start_bot):
    bot = await start_bot(platforms={"web": {"enabled": True}})
    await bot.host.http.start()
    body, _ = mention(bot, "help")
    status, _ = await post(bot, body, signed(body))
    assert status == 404


async def test_buttons_work_over_http(start_bot):
    bot = await start_bot({"mode": "http"})
    body, root = mention(bot, 'call wipe {"target": "db-2"}')
    assert (await post(bot, body, signed(body)))[0] == 200

    def question():
        return next(
            (
                m["ts"]
                for m in bot.fake.messages.get(GENERAL, [])
                if m.get("thread_ts") == root and "bothost_approve" in json.dumps(m.get("blocks"))
            ),
            None,
        )

    ts = await bot.fake.wait_for(question)
    click = bot.fake.click_payload(ALICE, GENERAL, ts, "bothost_approve")
    form = urlencode({"payload": json.dumps(click)}).encode()
    headers = dict(signed(form), **{"Content-Type": "application/x-www-form-urlencoded"})
    assert (await post(bot, form, headers))[0] == 200
    await bot.wait_reply(GENERAL, root, "wiped db-2")


def test_adding_the_route_leaves_slack_bolt_unimported():
    # every host adds the route, Slack or not: slack_bolt and slack_sdk were a third of a
    # `bothost run` start's imports; the first request the route takes imports them
    program = (
        "import sys\n"
        "from aiohttp import web\n"
        "from bothost.plugins.slack import register_routes\n"
        "register_routes(app=web.Application())\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'slack_bolt', 'slack_sdk'}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


async def test_unsigned_garbage_is_refused_before_it_is_parsed(start_bot, caplog):
    """Only Slack holds the secret: a request without a valid signature gets 401 whatever
    its body or timestamp holds, and leaves no error in the log (no traceback an outsider
    can write at will)."""
    bot = await start_bot({"mode": "http", "app_token": None})
    body, ts = mention(bot, "help")
    deep = b"[" * 100_000 + b"]" * 100_000
    form = b"payload=" + b"%5B" * 50_000
    requests = [
        (deep, {"Content-Type": "application/json"}),
        (deep, signed(deep, secret="not-the-secret")),
        (form, {"Content-Type": "application/x-www-form-urlencoded"}),
        (body, {**signed(body), "X-Slack-Request-Timestamp": "soon"}),
        (body, {**signed(body), "X-Slack-Request-Timestamp": "1" + "0" * 5000}),
        (body, {**signed(body), "X-Slack-Request-Timestamp": "-1"}),
    ]
    for data, headers in requests:
        status, _ = await post(bot, io.BytesIO(data), headers)
        assert status == 401, (data[:20], headers)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    status, _ = await post(bot, body, signed(body))  # Slack's own request still works
    assert status == 200
    await bot.wait_reply(GENERAL, ts, "offline agent")


async def test_a_signed_body_bolt_cannot_parse_gets_400_not_500(start_bot, caplog):
    """Slack never sends one, but a signed body nested deeper than Python's parser goes
    (or a form payload that is not JSON) is a bad request: 400 and one warning line, not a
    500 with a traceback."""
    bot = await start_bot({"mode": "http", "app_token": None})
    deep = b"[" * 100_000 + b"]" * 100_000
    form = b"payload=" + b"%5B" * 50_000
    for data, kind in ((deep, "application/json"), (form, "application/x-www-form-urlencoded")):
        status, _ = await post(bot, io.BytesIO(data), {**signed(data), "Content-Type": kind})
        assert status == 400, kind
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    body, ts = mention(bot, "help")
    status, _ = await post(bot, body, signed(body))
    assert status == 200
    await bot.wait_reply(GENERAL, ts, "offline agent")
