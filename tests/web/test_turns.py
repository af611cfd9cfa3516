"""`stop` on the web chat and on inbound webhook messages cancels every turn of the session."""

from __future__ import annotations

import asyncio

from tests.helpers import until
from tests.web.conftest import base_url, signed


class StuckModel:
    """A model that never answers, so each turn runs until it is stopped."""

    def __init__(self) -> None:
        self.started = 0

    async def complete(self, request):
        self.started += 1
        await asyncio.Event().wait()


def stuck(host) -> StuckModel:
    model = StuckModel()
    host.llm.complete = model.complete
    return model


async def chat(client, host, session, text):
    async with client.post(
        base_url(host) + "/api/chat", json={"session": session, "text": text}
    ) as response:
        assert response.status == 200
        return await response.json()


async def test_stop_in_the_web_chat_cancels_both_turns_of_the_session(web_host, client):
    model = stuck(web_host)
    first = asyncio.ensure_future(chat(client, web_host, "s1", "do one slow thing"))
    second = asyncio.ensure_future(chat(client, web_host, "s1", "and another"))
    other = asyncio.ensure_future(chat(client, web_host, "s2", "a third, elsewhere"))
    await until(lambda: model.started == 3)
    stop = await chat(client, web_host, "s1", "stop")
    assert stop["reply"] == "Stopped." and stop["outcome"] == "stopped"
    async with asyncio.timeout(10):
        answers = await asyncio.gather(first, second)
    assert [(a["reply"], a["outcome"]) for a in answers] == [("Stopped.", "stopped")] * 2
    assert not other.done()  # another session's turn is not touched
    assert (await chat(client, web_host, "s2", "stop"))["outcome"] == "stopped"
    async with asyncio.timeout(10):
        assert (await other)["outcome"] == "stopped"
    assert (await chat(client, web_host, "s1", "stop"))["outcome"] == "nothing-running"


async def message(client, host, secret, text):
    body, headers = signed(secret, {"text": text, "user": "ci-bot", "channel": "builds"})
    async with client.post(
        base_url(host) + "/webhook/message", data=body, headers=headers
    ) as response:
        assert response.status == 200
        return await response.json()


async def test_a_webhook_stop_message_cancels_every_turn_of_its_channel(web_host, client, secret):
    model = stuck(web_host)
    first = asyncio.ensure_future(message(client, web_host, secret, "build report"))
    second = asyncio.ensure_future(message(client, web_host, secret, "deploy report"))
    await until(lambda: model.started == 2)
    stop = await message(client, web_host, secret, "stop")
    assert stop["reply"] == "Stopped." and stop["outcome"] == "stopped"
    async with asyncio.timeout(10):
        answers = await asyncio.gather(first, second)
    assert [(a["reply"], a["outcome"]) for a in answers] == [("Stopped.", "stopped")] * 2
