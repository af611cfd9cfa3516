"""Hostile JSON at every HTTP entry: 400 with a short JSON error, never a 5xx.

Webhook senders retry a 5xx for days, so a body we cannot use must be refused for good:
JSON nested a thousand levels deep, lone surrogates (``"\\ud800"``, which no UTF-8 output or
SQLite column can hold), ``NaN``, numbers past Python's digit limit, bytes that are not UTF-8.
A well-formed request after each still works, and nothing unusable reached the store.
"""

from __future__ import annotations

import io
import json

import pytest

from tests.web.conftest import base_url, signed

DEEP = b"[" * 1000 + b"]" * 1000
DEEP_OBJECT = b'{"a":' * 1000 + b"1" + b"}" * 1000
HOSTILE = {
    "deep array": DEEP,
    "deep object": DEEP_OBJECT,
    "deep inside a field": b'{"type": "x", "text": "hi", "user": "u", "payload": ' + DEEP + b"}",
    "lone surrogate value": b'{"type": "\\ud800", "text": "\\ud800", "user": "u",'
    b' "session": "s", "action": "ack", "event_ids": [1]}',
    "lone surrogate key": b'{"\\udc00": 1, "text": "hi", "user": "u"}',
    "NaN": b'{"text": NaN, "user": "u", "minutes": NaN}',
    "5000 digits": b'{"text": "hi", "user": "u", "n": ' + b"7" * 5000 + b"}",
    "not UTF-8": b'{"text": "\xff\xfe", "user": "u"}',
}
API_ROUTES = [
    "/api/chat",
    "/api/chat/stream",
    "/api/feedback",
    "/api/answer",
    "/api/rules",
    "/api/rules/remove",
    "/api/rules/test",
]
WEBHOOK_ROUTES = ["/webhook/events/ops", "/webhook/message"]


async def answer(client, url, body, headers):
    async with client.post(url, data=body, headers=headers) as response:
        text = await response.text()
        return response.status, text


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("route", API_ROUTES)
async def test_the_web_api_answers_400_to_hostile_json(web_host, client, route, name):
    status, text = await answer(
        client, base_url(web_host) + route, HOSTILE[name], {"Content-Type": "application/json"}
    )
    assert status == 400, text
    assert "error" in json.loads(text)


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("route", WEBHOOK_ROUTES)
async def test_signed_webhooks_answer_400_to_hostile_json(web_host, client, secret, route, name):
    body, headers = signed(secret, HOSTILE[name])
    status, text = await answer(client, base_url(web_host) + route, body, headers)
    assert status == 400, text
    assert "error" in json.loads(text)
    body, headers = signed(secret, {"type": "ok", "summary": "after", "text": "help", "user": "u"})
    status, text = await answer(client, base_url(web_host) + route, body, headers)
    assert status in (200, 202), text


async def test_nothing_unusable_reached_the_store(web_host, client, secret):
    for name in sorted(HOSTILE):
        body, headers = signed(secret, HOSTILE[name])
        await answer(client, base_url(web_host) + "/webhook/events/ops", body, headers)
    rows = await web_host.store.run(lambda db: db.execute("SELECT COUNT(*) FROM events").fetchone())
    assert rows == (0,)


async def test_an_overlong_webhook_id_is_refused_with_400(web_host, client, secret):
    body, headers = signed(secret, {"summary": "x"}, msg_id="msg_" + "a" * 8000)
    status, text = await answer(client, base_url(web_host) + "/webhook/events/ops", body, headers)
    assert status == 400 and "webhook-id" in json.loads(text)["error"]
    rows = await web_host.store.run(
        lambda db: db.execute("SELECT COUNT(*) FROM webhook_ids").fetchone()
    )
    assert rows == (0,)
    body, headers = signed(secret, {"summary": "x"}, msg_id="msg_" + "a" * 200)
    status, _ = await answer(client, base_url(web_host) + "/webhook/events/ops", body, headers)
    assert status == 200


@pytest.mark.parametrize("arguments", ["[" * 1000 + "]" * 1000, '{"a": "\\ud800"}'])
async def test_a_hostile_call_command_gets_a_reply_not_a_500(web_host, client, secret, arguments):
    text = f"call wipe_disk {arguments}"
    status, reply = await answer(
        client,
        base_url(web_host) + "/api/chat",
        json.dumps({"session": "s", "text": text}),
        {"Content-Type": "application/json"},
    )
    assert status == 200 and "Arguments must be a JSON object" in json.loads(reply)["reply"]
    body, headers = signed(secret, {"text": text, "user": "u"})
    status, reply = await answer(client, base_url(web_host) + "/webhook/message", body, headers)
    assert status == 200 and "Arguments must be a JSON object" in json.loads(reply)["reply"]


@pytest.mark.parametrize("route", API_ROUTES)
async def test_an_oversized_body_gets_a_json_413_naming_the_limit(web_host, client, route):
    # found last session: the web API answered aiohttp's plain-text 413 ("Maximum request
    # body size … exceeded") where every other refusal of it is a JSON error
    from bothost.jsondecode import MAX_BYTES

    body = io.BytesIO(b'{"text": "' + b"x" * MAX_BYTES + b'"}')  # bytes this large: a warning
    status, text = await answer(
        client, base_url(web_host) + route, body, {"Content-Type": "application/json"}
    )
    assert status == 413, text
    assert str(MAX_BYTES) in json.loads(text)["error"], text
    status, text = await answer(  # and the host goes on answering
        client, base_url(web_host) + route, HOSTILE["NaN"], {"Content-Type": "application/json"}
    )
    assert status == 400, text
