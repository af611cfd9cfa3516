import asyncio
import json
import textwrap
import time
from types import SimpleNamespace

import pytest
from aiohttp import web
from bothost.plugins.web import outbound
from bothost.plugins.web.signing import verify
from multidict import CIMultiDict

from bothost.host.wiring import tick_once
from bothost.models import Briefing, BriefingItem
from bothost.store import Store, core_migrations
from bothost.store.target import DEFAULT_FILE
from tests.conftest import both_backends
from tests.helpers import make_host, serve_app
from tests.store_faults import refuse_disk_events
from tests.web.conftest import base_url, host_config, signed

pytestmark = both_backends  # the tests that use web_host: dedupe by webhook-id on both


async def events_rows(host):
    return await host.store.run(
        lambda db: db.execute(
            "SELECT source, type, payload, dedupe_key, status FROM events ORDER BY id"
        ).fetchall()
    )


async def post(client, host, path, body, headers):
    async with client.post(base_url(host) + path, data=body, headers=headers) as response:
        return response.status, await response.json(content_type=None)


async def test_a_signed_event_is_queued_with_its_webhook_id_as_dedupe_key(web_host, client, secret):
    body, headers = signed(
        secret, {"type": "disk_full", "payload": {"summary": "db-1 at 95%"}}, msg_id="msg_a1"
    )
    status, answer = await post(client, web_host, "/webhook/events/ops", body, headers)
    assert status == 200 and answer["accepted"] is True and answer["event_id"]
    [(source, type_, payload, key, state)] = await events_rows(web_host)
    assert (source, type_, key, state) == ("ops", "disk_full", "msg_a1", "pending")
    assert json.loads(payload) == {"summary": "db-1 at 95%"}


async def test_without_type_and_payload_the_whole_body_is_a_webhook_event(web_host, client, secret):
    body, headers = signed(secret, {"summary": "build failed", "id": 7})
    status, _ = await post(client, web_host, "/webhook/events/ci", body, headers)
    assert status == 200
    [(source, type_, payload, _, _)] = await events_rows(web_host)
    assert (source, type_, json.loads(payload)) == (
        "ci",
        "webhook",
        {"summary": "build failed", "id": 7},
    )


async def test_a_forged_signature_is_refused_and_nothing_is_queued(web_host, client, secret):
    body, headers = signed("whsec_" + "Zm9yZ2VkLXNlY3JldC1rZXktMTIz", {"summary": "x"})
    status, answer = await post(client, web_host, "/webhook/events/ops", body, headers)
    assert status == 401 and "signature" in answer["error"]
    body, headers = signed(secret, {"summary": "x"})
    status, _ = await post(client, web_host, "/webhook/events/ops", body + b" ", headers)
    assert status == 401
    assert await events_rows(web_host) == []


async def test_a_stale_timestamp_is_refused(web_host, client, secret):
    body, headers = signed(secret, {"summary": "old"}, now=time.time() - 301)
    status, answer = await post(client, web_host, "/webhook/events/ops", body, headers)
    assert status == 400 and "timestamp" in answer["error"]
    assert await events_rows(web_host) == []


async def test_two_signature_headers_are_a_400_and_nothing_is_queued(web_host, client, secret):
    # found from outside over a raw socket: the good signature first was 200, second 401
    body, headers = signed(secret, {"summary": "x"})
    doubled = CIMultiDict(headers)
    doubled.add("webhook-signature", "v1,bm90IGl0")
    status, answer = await post(client, web_host, "/webhook/events/ops", body, doubled)
    assert status == 400 and answer["error"].startswith("webhook-signature given twice")
    assert await events_rows(web_host) == []


async def test_a_repeated_webhook_id_is_a_duplicate_and_not_queued_again(web_host, client, secret):
    body, headers = signed(secret, {"summary": "once"}, msg_id="msg_dup")
    assert (await post(client, web_host, "/webhook/events/ops", body, headers))[0] == 200
    # the sender retries later: same id, new timestamp and signature
    body, headers = signed(secret, {"summary": "once"}, msg_id="msg_dup")
    status, answer = await post(client, web_host, "/webhook/events/ops", body, headers)
    assert (status, answer) == (200, {"duplicate": True})
    assert len(await events_rows(web_host)) == 1


async def test_concurrent_retries_of_one_id_queue_one_event(web_host, client, secret):
    requests = [signed(secret, {"summary": "burst"}, msg_id="msg_same") for _ in range(5)]
    answers = await asyncio.gather(
        *(post(client, web_host, "/webhook/events/ops", b, h) for b, h in requests)
    )
    assert [s for s, _ in answers] == [200] * 5
    assert sum(1 for _, a in answers if a.get("duplicate")) == 4
    assert len(await events_rows(web_host)) == 1


@pytest.fixture
async def second_host(web_host, home, tmp_path, secret, store_target, backend):
    """Another host on the same database as ``web_host`` (its own home, its own port)."""
    if backend == "sqlite":  # refused: tests/faults/test_sqlite_one_host.py
        pytest.skip("one bothost run per SQLite file; several hosts share PostgreSQL")
    other_home = tmp_path / "home2"
    other_home.mkdir(mode=0o700)
    shared = store_target if isinstance(store_target, str) else str(web_host.store.path)
    host = make_host(other_home, {**host_config(tmp_path, secret), "store": {"url": shared}})
    await host.start(mcp=False, tick=False)
    yield host
    await host.stop()


async def test_a_retry_that_reaches_another_host_is_still_a_duplicate(
    web_host, second_host, client, secret
):
    hosts = [web_host, second_host] * 3
    events = [signed(secret, {"summary": "spread"}, msg_id="msg_spread") for _ in hosts]
    answers = await asyncio.gather(
        *(
            post(client, h, "/webhook/events/ops", b, hd)
            for h, (b, hd) in zip(hosts, events, strict=True)
        )
    )
    assert sum(1 for _, a in answers if a.get("duplicate")) == len(hosts) - 1
    assert len(await events_rows(second_host)) == 1
    messages = [signed(secret, {"text": "help", "user": "ci"}, msg_id="msg_m") for _ in hosts]
    answers = await asyncio.gather(
        *(
            post(client, h, "/webhook/message", b, hd)
            for h, (b, hd) in zip(hosts, messages, strict=True)
        )
    )
    assert sum(1 for _, a in answers if "reply" in a) == 1, answers
    assert sum(1 for _, a in answers if a.get("duplicate")) == len(hosts) - 1


async def test_oversize_bodies_and_bad_json_are_refused(home, tmp_path, client, secret):
    host = make_host(
        home,
        host_config(tmp_path, secret, platforms={"webhook": {"secret": secret, "max_body": 2000}}),
    )
    await host.start(mcp=False, tick=False)
    try:
        body, headers = signed(secret, {"summary": "x" * 3000})
        assert (await post(client, host, "/webhook/events/ops", body, headers))[0] == 413
        del headers["webhook-id"]  # size is checked before anything else
        assert (await post(client, host, "/webhook/events/ops", body, headers))[0] == 413
        body, headers = signed(secret, b"{not json")
        status, answer = await post(client, host, "/webhook/events/ops", body, headers)
        assert status == 400 and "JSON" in answer["error"]
        body, headers = signed(secret, [1, 2])
        assert (await post(client, host, "/webhook/events/ops", body, headers))[0] == 400
        body, headers = signed(secret, {"payload": "not an object"})
        assert (await post(client, host, "/webhook/events/ops", body, headers))[0] == 400
        assert await events_rows(host) == []
    finally:
        await host.stop()


async def test_webhook_routes_are_404_without_a_secret(home, tmp_path, client):
    host = make_host(home)
    await host.start(mcp=False, tick=False)
    try:
        body, headers = signed("whsec_c2VjcmV0", {"text": "hi", "user": "u"})
        for path in ("/webhook/message", "/webhook/events/ops"):
            async with client.post(base_url(host) + path, data=body, headers=headers) as resp:
                assert resp.status == 404
    finally:
        await host.stop()


async def test_a_pushed_event_reaches_the_next_briefing(web_host, client, secret):
    body, headers = signed(
        secret, {"type": "alert", "payload": {"id": "a1", "summary": "db-1 disk at 95%"}}
    )
    assert (await post(client, web_host, "/webhook/events/ops", body, headers))[0] == 200
    result = await tick_once(web_host, "test")
    assert result.status == "ok" and len(result.briefings) == 1
    assert "db-1 disk at 95%" in result.briefings[0].text
    async with client.get(base_url(web_host) + "/api/dashboard") as response:
        dashboard = await response.json()
    assert "db-1 disk at 95%" in dashboard["briefings"][0]["text"]
    assert dashboard["briefings"][0]["address"] == "web:briefings"
    assert dashboard["queue"]["done"] == 1


async def test_a_message_gets_its_reply_in_the_response_and_is_not_admin(web_host, client, secret):
    body, headers = signed(secret, {"text": "tools", "user": "ci-bot", "channel": "builds"})
    status, answer = await post(client, web_host, "/webhook/message", body, headers)
    assert status == 200 and "wipe_disk" in answer["reply"]
    session = await web_host.store.run(
        lambda db: db.execute('SELECT id, "user" FROM sessions').fetchall()
    )
    assert session == [("webhook:builds", "ci-bot")]
    # a webhook sender cannot approve anything: nobody to ask means no
    body, headers = signed(secret, {"text": "call wipe_disk {}", "user": "ci-bot"})
    status, answer = await post(client, web_host, "/webhook/message", body, headers)
    assert status == 200 and "wiped" not in answer["reply"]
    status, answer = await post(client, web_host, "/webhook/message", body, headers)
    assert answer == {"duplicate": True}


class Receiver:
    """A webhook consumer on 127.0.0.1 that checks signatures and can fail first."""

    def __init__(self, secret, fail_first=0, fail_status=503):
        self.secret, self.fail_first, self.fail_status = secret, fail_first, fail_status
        self.received, self.attempts = [], 0
        self.arrived = asyncio.Event()

    async def handle(self, request):
        self.attempts += 1
        body = await request.read()
        msg_id = verify(self.secret, request.headers, body)
        if self.attempts <= self.fail_first:
            return web.Response(status=self.fail_status)
        self.received.append((msg_id, json.loads(body)))
        self.arrived.set()
        return web.json_response({"ok": True})

    async def __aenter__(self):
        app = web.Application()
        app.router.add_post("/hook", self.handle)
        self.runner, base = await serve_app(app)
        self.url = f"{base}/hook"
        return self

    async def __aexit__(self, *exc):
        await self.runner.cleanup()


async def test_a_message_with_callback_url_gets_a_signed_reply_later(web_host, client, secret):
    web_host.config.platforms["webhook"].callback_allow = ["127.0.0.0/8"]  # test_webhook_callbacks
    async with Receiver(secret) as receiver:
        body, headers = signed(
            secret, {"text": "help", "user": "bob", "callback_url": receiver.url}, msg_id="msg_cb"
        )
        status, answer = await post(client, web_host, "/webhook/message", body, headers)
        assert (status, answer) == (202, {"accepted": True, "id": "msg_cb"})
        async with asyncio.timeout(10):
            await receiver.arrived.wait()
    [(reply_id, reply)] = receiver.received
    assert reply_id.startswith("rpl_") and reply["in_reply_to"] == "msg_cb"
    assert "offline agent" in reply["text"] and reply["user"] == "bob"


def sample_briefing():
    return Briefing(
        title="Briefing · 2 events",
        text="HIGH\n• deploy failed",
        items=[BriefingItem("high", "deploy failed")],
        targets=["webhook:ops"],
        id=41,
    )


@pytest.fixture
def fast_retries(monkeypatch):
    monkeypatch.setattr(outbound, "FIRST_DELAY", 0.01)


async def test_briefings_to_a_webhook_target_are_signed_and_retried(
    home, tmp_path, secret, fast_retries
):
    target_secret = "whsec_dGFyZ2V0LXNlY3JldC0xMjM0NTY="
    async with Receiver(target_secret, fail_first=2) as receiver:
        host = make_host(
            home,
            host_config(
                tmp_path,
                secret,
                platforms={
                    "webhook": {
                        "secret": secret,
                        "targets": {"ops": {"url": receiver.url, "secret": target_secret}},
                    }
                },
            ),
        )
        await host.start(mcp=False, tick=False)
        try:
            ref = await host.deliver("webhook:ops", sample_briefing())
        finally:
            await host.stop()
    assert receiver.attempts == 3 and "brf_41" in ref
    [(msg_id, payload)] = receiver.received
    assert msg_id == "brf_41" and payload["type"] == "briefing"
    assert payload["items"][0]["summary"] == "deploy failed"


async def test_a_webhook_target_answering_4xx_fails_at_once(home, tmp_path, secret, fast_retries):
    async with Receiver(secret, fail_first=10, fail_status=410) as receiver:
        host = make_host(
            home,
            host_config(
                tmp_path,
                secret,
                platforms={
                    "webhook": {"secret": secret, "targets": {"ops": {"url": receiver.url}}}
                },
            ),
        )
        await host.start(mcp=False, tick=False)
        try:
            with pytest.raises(outbound.DeliveryError, match="410"):
                await host.deliver("webhook:ops", sample_briefing())
            with pytest.raises(outbound.DeliveryError, match="no such target"):
                await host.deliver("webhook:nowhere", sample_briefing())
        finally:
            await host.stop()
    assert receiver.attempts == 1


async def test_a_message_whose_turn_fails_can_be_retried(web_host, client, secret, monkeypatch):
    original = web_host.handle_message

    async def broken(message, **kwargs):
        raise RuntimeError("agent exploded")

    monkeypatch.setattr(web_host, "handle_message", broken)
    body, headers = signed(secret, {"text": "help", "user": "u"}, msg_id="msg_retry")
    async with client.post(
        base_url(web_host) + "/webhook/message", data=body, headers=headers
    ) as response:
        assert response.status == 500
    monkeypatch.setattr(web_host, "handle_message", original)
    body, headers = signed(secret, {"text": "help", "user": "u"}, msg_id="msg_retry")
    status, answer = await post(client, web_host, "/webhook/message", body, headers)
    assert status == 200 and "offline agent" in answer["reply"]


async def test_concurrent_signed_events_are_committed_with_at_most_one_store_job_each(
    web_host, client, secret
):
    # a first request, so that the hourly clean-up of old ids is not counted below
    body, headers = signed(secret, {"summary": "warm-up"})
    assert (await post(client, web_host, "/webhook/events/ops", body, headers))[0] == 200
    jobs = []
    original = web_host.store.submit

    def counting_submit(fn):  # the store thread's jobs (``run`` submits one too)
        jobs.append(fn)
        return original(fn)

    web_host.store.submit = counting_submit
    requests = [signed(secret, {"type": "alert", "payload": {"n": n}}) for n in range(40)]
    answers = await asyncio.gather(
        *(post(client, web_host, "/webhook/events/ops", b, h) for b, h in requests)
    )
    web_host.store.submit = original
    assert all(s == 200 and a["accepted"] and a["event_id"] for s, a in answers), answers
    # the id's record and the event are one write, shared with whatever arrived meanwhile
    assert len(jobs) <= len(requests)
    assert len(await events_rows(web_host)) == 41
    assert await web_host.store.run(lambda db: db.value("SELECT count(*) FROM webhook_ids")) == 41


async def test_a_store_failure_is_never_answered_2xx_and_the_retry_goes_through(
    web_host, client, secret
):
    await web_host.store.run(refuse_disk_events)
    body, headers = signed(secret, {"summary": "full"}, msg_id="msg_full")
    url = base_url(web_host) + "/webhook/events/disk"
    async with client.post(url, data=body, headers=headers) as response:
        assert response.status >= 500
    assert await events_rows(web_host) == []
    await web_host.store.run(
        lambda db: (
            db.execute("DROP TRIGGER refuse ON events")
            if db.dialect != "sqlite"
            else db.execute("DROP TRIGGER refuse")
        )
    )
    body, headers = signed(secret, {"summary": "full"}, msg_id="msg_full")  # the retry
    status, answer = await post(client, web_host, "/webhook/events/disk", body, headers)
    assert status == 200 and answer["accepted"] and answer["event_id"], answer
    assert len(await events_rows(web_host)) == 1


HOOK_PLUGIN = textwrap.dedent("""
    from bothost.hookspecs import hookimpl

    SEEN = []


    @hookimpl
    def event_received(event):
        SEEN.append(event.dedupe_key)
        return event.type != "spam"
""")


async def test_event_hooks_see_each_webhook_id_once(home, tmp_path, client, secret):
    data = host_config(tmp_path, secret)
    (tmp_path / "plugins" / "hooked.py").write_text(HOOK_PLUGIN)
    host = make_host(home, data)
    await host.start(mcp=False, tick=False)
    try:
        for _ in range(2):  # the original and the sender's retry
            for msg_id, type_ in (("msg_spam", "spam"), ("msg_ham", "alert")):
                body, headers = signed(secret, {"type": type_, "payload": {}}, msg_id=msg_id)
                assert (await post(client, host, "/webhook/events/ops", body, headers))[0] == 200
        [plugin] = [p for p in host.pm.get_plugins() if hasattr(p, "SEEN")]
        assert plugin.SEEN == ["msg_spam", "msg_ham"]
        [(_, type_, _, key, _)] = await events_rows(host)
        assert (type_, key) == ("alert", "msg_ham")
    finally:
        await host.stop()


async def test_a_message_claims_its_webhook_id_in_one_store_job(
    web_host, client, secret, monkeypatch
):
    # a first message, so that the hourly clean-up of old ids is not counted below
    body, headers = signed(secret, {"text": "help", "user": "u"})
    assert (await post(client, web_host, "/webhook/message", body, headers))[0] == 200

    async def instant(message, **kwargs):  # the turn itself is not what is counted
        return SimpleNamespace(text="done", outcome="ok")

    monkeypatch.setattr(web_host, "handle_message", instant)
    jobs = []
    original = web_host.store.run

    async def counting_run(fn):
        jobs.append(fn)
        return await original(fn)

    monkeypatch.setattr(web_host.store, "run", counting_run)
    body, headers = signed(secret, {"text": "help", "user": "u"}, msg_id="msg_once")
    assert await post(client, web_host, "/webhook/message", body, headers) == (
        200,
        {"id": "msg_once", "reply": "done", "outcome": "ok"},
    )
    # checking and recording the id are one write: of hosts sharing the database, the one
    # whose insert succeeds runs the message
    assert len(jobs) == 1
    status, answer = await post(client, web_host, "/webhook/message", body, headers)
    assert (status, answer) == (200, {"duplicate": True})
    assert (
        await web_host.store.run(
            lambda db: db.value("SELECT count(*) FROM platform_deliveries WHERE key = 'msg_once'")
        )
        == 1
    )


@pytest.mark.parametrize(
    "segment", ["..", ".", "%2E%2E", "%2e", "a%2Fb", "..%2F..%2Fetc", "a%0Ab", "a%00b", ".env"]
)
async def test_a_source_that_is_no_name_is_refused_and_nothing_is_queued(
    web_host, client, secret, segment
):
    # found last session: `..` (and `.`) passed the route's check as a source name, to be
    # stored and shown (and, to anything that files events by source, a path upwards)
    from yarl import URL

    body, headers = signed(secret, {"summary": "x"})
    url = URL(base_url(web_host) + "/webhook/events/" + segment, encoded=True)
    async with client.post(url, data=body, headers=headers) as response:
        status = response.status
        text = await response.text()
    assert status in (400, 404), (status, text)
    if status == 400:
        assert json.loads(text)["error"].startswith("source must"), text
    assert await events_rows(web_host) == []


@pytest.mark.parametrize("name", ["..", ".", "a/b", "tab\there", ""])
def test_a_webhook_target_name_that_is_no_name_is_a_config_error(home, tmp_path, secret, name):
    from bothost.config import ConfigError

    data = host_config(tmp_path, secret)
    data["platforms"]["webhook"]["targets"] = {name: {"url": "https://example.com/hook"}}
    with pytest.raises(ConfigError, match=r"platforms\.webhook: targets\[") as caught:
        make_host(home, data)
    assert "letter or digit" in str(caught.value)


async def test_a_message_id_an_older_bothost_recorded_is_still_a_duplicate(
    home, tmp_path, client, secret, store_target
):
    """An older bothost's webhook plugin recorded a message's ``webhook-id`` in
    ``webhook_ids``; the host now takes it in ``platform_deliveries``. Standard Webhooks
    senders retry for days, so a retry reaching the upgraded host must still be a duplicate."""
    target = store_target if isinstance(store_target, str) else home / DEFAULT_FILE
    older = Store(target, [m for m in core_migrations() if m.number <= 18])
    try:
        older.call(
            lambda db: db.execute(
                "INSERT INTO webhook_ids (id, received_at) VALUES (?, ?)",
                ["msg_before_upgrade", time.time()],
            )
        )
    finally:
        older.close()
    data = host_config(tmp_path, secret)
    if isinstance(store_target, str):
        data = {**data, "store": {"url": store_target}}
    host = make_host(home, data)
    await host.start(mcp=False, tick=False)
    try:
        body, headers = signed(secret, {"text": "help", "user": "u"}, msg_id="msg_before_upgrade")
        assert await post(client, host, "/webhook/message", body, headers) == (
            200,
            {"duplicate": True},
        )
        assert await host.store.run(lambda db: db.value("SELECT count(*) FROM sessions")) == 0
    finally:
        await host.stop()
