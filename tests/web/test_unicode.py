"""Unicode an attacker controls (NUL, bidi overrides, lone surrogates escaped in JSON) in
chat messages, webhook messages and event sources: answered like any text, stored, and
read back, on both store backends (PostgreSQL's text type refuses a NUL character)."""

from __future__ import annotations

from tests.conftest import both_backends
from tests.web.conftest import base_url, signed

pytestmark = both_backends

TRICKS = "a\x00b \u202egnp.exe\u202c \u0430dmin \ufeff\u200b"  # NUL, bidi, homoglyph, zero-width


async def test_a_chat_message_with_nul_and_bidi_is_answered_and_kept(web_host, client):
    async with client.post(
        base_url(web_host) + "/api/chat", json={"session": "u1", "text": "help " + TRICKS}
    ) as response:
        assert response.status == 200, await response.text()
        assert "offline agent" in (await response.json())["reply"]
    async with client.get(base_url(web_host) + "/api/history?session=u1") as response:
        assert response.status == 200
        texts = [m.get("text", "") for m in (await response.json())["messages"]]
    assert any("gnp.exe" in t for t in texts)


async def test_a_webhook_message_with_nul_is_answered(web_host, client, secret):
    body, headers = signed(
        secret, {"text": "help " + TRICKS, "user": "b\x00t", "channel": "c\x00h"}
    )
    async with client.post(
        base_url(web_host) + "/webhook/message", data=body, headers=headers
    ) as response:
        assert response.status == 200, await response.text()
        assert "offline agent" in (await response.json())["reply"]


async def test_an_event_with_nul_in_its_type_is_queued(web_host, client, secret):
    body, headers = signed(secret, {"type": "event/x\x00y", "payload": {"summary": TRICKS}})
    async with client.post(
        base_url(web_host) + "/webhook/events/src", data=body, headers=headers
    ) as response:
        assert response.status == 200, await response.text()
    kinds = await web_host.store.run(lambda db: db.execute("SELECT type FROM events").fetchall())
    assert len(kinds) == 1 and kinds[0][0].startswith("event/x")
