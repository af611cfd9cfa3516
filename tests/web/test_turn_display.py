"""What the web chat shows of a turn, at the HTTP level: tool progress on the stream, a
stopped turn's words kept for the reload, tool calls on the dashboard as people read them."""

from __future__ import annotations

import asyncio

from tests.web.conftest import base_url
from tests.web.test_chat import next_event, sse_events


def lookup_weather(city: str) -> dict:
    """Returns the weather as data."""
    return {"city": city, "temperature_c": 21.5, "sky": "clear", "alerts": []}


def broken_tool() -> str:
    """Always fails."""
    raise RuntimeError("the disk is on fire")


async def stream(client, host, session, text):
    """Every (event, data) of one streamed turn."""
    async with client.post(
        base_url(host) + "/api/chat/stream", json={"session": session, "text": text}
    ) as response:
        assert response.status == 200
        return [e async for e in sse_events(response)]


async def history(client, host, session):
    async with client.get(base_url(host) + f"/api/history?session={session}") as response:
        assert response.status == 200
        return (await response.json())["messages"]


async def test_the_stream_sends_a_status_while_a_tool_runs(web_host, client):
    web_host.registry.register(lookup_weather)
    events = await stream(client, web_host, "st", 'call lookup_weather {"city": "Bern"}')
    kinds = [name for name, _ in events]
    assert "status" in kinds and kinds[-1] == "done"
    status = next(data for name, data in events if name == "status")
    assert "lookup_weather" in status["text"]
    assert kinds.index("status") < kinds.index("delta")  # while it runs, before the reply


class HalfSaid:
    """A model that streams some words, then never finishes: a turn to stop."""

    def __init__(self, words: str) -> None:
        self.words = words
        self.asked = asyncio.Event()

    async def complete(self, request):
        self.asked.set()
        if self.words and request.on_text:
            await request.on_text(self.words)
        await asyncio.Event().wait()


async def stop_mid_reply(client, host, session, words):
    """Stream a turn, stop it once it has started; the `done` event's data."""
    model = HalfSaid(words)
    host.llm.complete = model.complete
    url = base_url(host)
    async with client.post(
        url + "/api/chat/stream", json={"session": session, "text": "write me an essay"}
    ) as response:
        events = sse_events(response)
        if words:
            assert (await next_event(events, "delta"))["text"] == words
        else:
            async with asyncio.timeout(10):
                await model.asked.wait()
        async with client.post(url + "/api/chat", json={"session": session, "text": "stop"}) as r:
            assert (await r.json())["outcome"] == "stopped"
        return await next_event(events, "done")


async def test_a_stopped_turn_keeps_its_streamed_words_after_a_reload(web_host, client):
    done = await stop_mid_reply(client, web_host, "halt", "The first half of a")
    assert done["outcome"] == "stopped"
    shown = await history(client, web_host, "halt")
    assert [(m["role"], m["text"], m["stopped"]) for m in shown] == [
        ("user", "write me an essay", False),
        ("assistant", "The first half of a", True),
    ]


async def test_a_turn_stopped_before_any_word_still_shows_it_was_stopped(web_host, client):
    await stop_mid_reply(client, web_host, "halt0", "")
    shown = await history(client, web_host, "halt0")
    assert [(m["role"], m["text"], m["stopped"]) for m in shown][-1] == ("assistant", "", True)


async def dashboard(client, host):
    async with client.get(base_url(host) + "/api/dashboard") as response:
        assert response.status == 200
        return await response.json()


async def test_a_failed_tool_call_is_an_error_on_the_dashboard(web_host, client):
    web_host.registry.register(broken_tool)
    await stream(client, web_host, "fail", "call broken_tool {}")
    (call,) = (await dashboard(client, web_host))["tool_calls"]
    assert call["tool"] == "broken_tool" and call["is_error"]
    assert call["status"] == "error"


async def test_a_tool_result_of_data_reads_as_text_for_people(web_host, client):
    web_host.registry.register(lookup_weather)
    events = await stream(client, web_host, "data", 'call lookup_weather {"city": "Bern"}')
    reply = events[-1][1]["reply"]
    assert reply == "city: Bern\ntemperature_c: 21.5\nsky: clear\nalerts: (none)"
    (call,) = (await dashboard(client, web_host))["tool_calls"]
    assert call["result"] == reply
