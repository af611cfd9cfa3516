"""The web chat, signed webhooks and the console hand stops and repeats to the host.

Each platform only translates (tests/test_thin_platforms.py keeps it so); here the host is
seen handling a stop word from each (its ``stop_turns``) and a repeated delivery from each
sender that retries (its inbox for a webhook message, its once-only ids for a webhook
event). The web chat and the console have no redeliveries: a page's POST and a typed line
are not retried by their sender.
"""

from __future__ import annotations

from bothost.plugins.console.platform import converse

from tests.web.conftest import base_url, signed


def count_stops(host, monkeypatch) -> list:
    """The addresses the host's ``stop_turns`` was asked to stop, as they come."""
    asked = []
    real = host.stop_turns

    async def stop_turns(address, within=False):
        asked.append(str(address))
        return await real(address, within)

    monkeypatch.setattr(host, "stop_turns", stop_turns)
    return asked


async def post_json(client, host, path, body, headers=None):
    async with client.post(base_url(host) + path, data=body, headers=headers or {}) as response:
        return response.status, await response.json(content_type=None)


async def test_a_stop_from_the_web_chat_is_the_hosts(web_host, client, monkeypatch):
    asked = count_stops(web_host, monkeypatch)
    async with client.post(
        base_url(web_host) + "/api/chat", json={"session": "tab", "text": "stop"}
    ) as response:
        answer = await response.json()
    assert answer["outcome"] == "nothing-running"
    assert asked == ["web:tab"]


async def test_a_stop_and_a_repeat_from_a_webhook_message_are_the_hosts(
    web_host, client, secret, monkeypatch
):
    asked = count_stops(web_host, monkeypatch)
    body, headers = signed(secret, {"text": "stop", "user": "ci", "channel": "builds"})
    status, answer = await post_json(client, web_host, "/webhook/message", body, headers)
    assert (status, answer["outcome"]) == (200, "nothing-running")
    assert asked == ["webhook:builds"]
    status, answer = await post_json(client, web_host, "/webhook/message", body, headers)
    assert (status, answer) == (200, {"duplicate": True})
    assert web_host.inbox.refused == 1 and asked == ["webhook:builds"]


async def test_a_repeated_webhook_event_is_refused_by_the_host(web_host, client, secret):
    body, headers = signed(secret, {"type": "ping"}, msg_id="msg_again")
    status, answer = await post_json(client, web_host, "/webhook/events/ci", body, headers)
    assert status == 200 and answer["accepted"]
    assert web_host.once_ids.known("msg_again")
    status, answer = await post_json(client, web_host, "/webhook/events/ci", body, headers)
    assert (status, answer) == (200, {"duplicate": True})


async def test_a_stop_from_the_console_is_the_hosts(web_host, monkeypatch, capsys):
    asked = count_stops(web_host, monkeypatch)
    reply = await converse(web_host, "stop")
    assert reply.outcome == "nothing-running" and asked == ["console:"]
    assert "Nothing is running." in capsys.readouterr().out
