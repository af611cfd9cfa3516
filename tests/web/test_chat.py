import asyncio
import json

from bothost.models import Address, Briefing, BriefingItem
from bothost.platform import Question
from tests.helpers import ingest_one
from tests.web.conftest import base_url


async def sse_events(response):
    """(event, data) pairs from a Server-Sent-Events response."""
    event, data = None, []
    async for raw in response.content:
        line = raw.decode().rstrip("\n")
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif line == "" and event:
            yield event, json.loads("\n".join(data))
            event, data = None, []


async def next_event(stream, name):
    async with asyncio.timeout(10):
        async for event, data in stream:
            if event == name:
                return data
    raise AssertionError(f"stream ended before {name}")


async def test_the_stream_endpoint_sends_deltas_then_the_reply(web_host, client):
    async with client.post(
        base_url(web_host) + "/api/chat/stream", json={"session": "s1", "text": "help"}
    ) as response:
        assert response.headers["Content-Type"].startswith("text/event-stream")
        events = [e async for e in sse_events(response)]
    kinds = [name for name, _ in events]
    assert kinds[0] == "delta" and kinds[-1] == "done"
    streamed = "".join(d["text"] for name, d in events if name == "delta")
    assert "offline agent" in streamed and events[-1][1]["reply"] == streamed


async def test_a_tool_call_is_approved_from_the_page_stream(web_host, client):
    url = base_url(web_host)
    async with client.get(url + "/api/events?session=ops") as page:
        stream = sse_events(page)
        await next_event(stream, "hello")
        turn = asyncio.ensure_future(
            client.post(
                url + "/api/chat",
                json={"session": "ops", "text": 'call wipe_disk {"target": "sdb"}'},
            )
        )
        question = await next_event(stream, "question")
        assert question["kind"] == "approval" and "wipe_disk" in question["text"]
        async with client.post(
            url + "/api/answer", json={"session": "ops", "id": question["id"], "answer": True}
        ) as response:
            assert response.status == 200
        assert (await next_event(stream, "question_closed"))["id"] == question["id"]
        async with asyncio.timeout(10):
            response = await turn
        assert "wiped sdb" in (await response.json())["reply"]
        response.release()
    decision = await web_host.store.run(
        lambda db: db.execute("SELECT decision, decided_by FROM approvals").fetchall()
    )
    assert decision == [("allow", "web")]


async def test_a_denied_tool_call_does_not_run(web_host, client):
    url = base_url(web_host)
    async with client.get(url + "/api/events?session=ops2") as page:
        stream = sse_events(page)
        await next_event(stream, "hello")
        turn = asyncio.ensure_future(
            client.post(url + "/api/chat", json={"session": "ops2", "text": "call wipe_disk {}"})
        )
        question = await next_event(stream, "question")
        await (
            await client.post(
                url + "/api/answer", json={"session": "ops2", "id": question["id"], "answer": False}
            )
        ).release()
        async with asyncio.timeout(10):
            reply = (await (await turn).json())["reply"]
    assert "wiped" not in reply
    calls = await web_host.store.run(
        lambda db: db.execute("SELECT tool, status, is_error FROM tool_calls").fetchall()
    )
    assert calls == [("wipe_disk", "denied", 1)]


async def test_nobody_on_the_page_means_no_answer(web_host):
    platform = web_host.active["web"]
    answer = await platform.ask(Address("web", "empty"), Question("Allow?", timeout=5))
    assert answer is None


async def test_an_unanswered_question_times_out_as_none(web_host, client):
    platform = web_host.active["web"]
    async with client.get(base_url(web_host) + "/api/events?session=slow") as page:
        await next_event(sse_events(page), "hello")
        answer = await platform.ask(Address("web", "slow"), Question("Allow?", timeout=0.2))
    assert answer is None and not platform.hub.pending


async def test_a_form_question_gets_the_values_back(web_host, client):
    platform = web_host.active["web"]
    url = base_url(web_host)
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    async with client.get(url + "/api/events?session=form") as page:
        stream = sse_events(page)
        await next_event(stream, "hello")
        asked = asyncio.ensure_future(
            platform.ask(
                Address("web", "form"), Question("Which city?", kind="form", schema=schema)
            )
        )
        question = await next_event(stream, "question")
        assert question["schema"] == schema
        async with client.post(
            url + "/api/answer", json={"session": "wrong", "id": question["id"], "answer": {}}
        ) as response:
            assert response.status == 404  # another session cannot answer it
        await (
            await client.post(
                url + "/api/answer",
                json={"session": "form", "id": question["id"], "answer": {"city": "Zurich"}},
            )
        ).release()
        async with asyncio.timeout(5):
            assert await asked == {"city": "Zurich"}


async def test_a_briefing_arrives_live_and_stays_on_the_dashboard(web_host, client):
    url = base_url(web_host)
    briefing = Briefing(
        title="Briefing · 1 event",
        text="URGENT\n• db-1 disk at 95%",
        items=[BriefingItem("urgent", "db-1 disk at 95%")],
        targets=["web:briefings"],
        id=7,
    )
    async with client.get(url + "/api/events?session=any") as page:
        stream = sse_events(page)
        await next_event(stream, "hello")
        ref = await web_host.deliver("web:briefings", briefing)
        live = await next_event(stream, "briefing")
    assert ref.startswith("web_briefings:")
    assert live["text"] == briefing.text and live["structure"]["items"][0]["priority"] == "urgent"
    async with client.get(url + "/api/dashboard") as response:
        assert (await response.json())["briefings"][0]["briefing_id"] == 7


async def test_the_transcript_is_loaded_per_session(web_host, client):
    url = base_url(web_host)
    await (await client.post(url + "/api/chat", json={"session": "t", "text": "help"})).release()
    async with client.get(url + "/api/history?session=t") as response:
        messages = (await response.json())["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[0]["text"] == "help"


async def test_bad_chat_requests_are_400(web_host, client):
    url = base_url(web_host)
    for body in (
        {"session": "a:b", "text": "hi"},
        {"session": "a", "text": ""},
        {"session": "a", "text": 5},
    ):
        async with client.post(url + "/api/chat", json=body) as response:
            assert response.status == 400
    async with client.post(
        url + "/api/chat", data=b"{oops", headers={"Content-Type": "application/json"}
    ) as response:
        assert response.status == 400


BAD_SESSIONS = [".", "..", "...", "", "a\nb", "a\x00", "a\x1b", "s" * 65, "a/b", "a b", 7]


async def test_every_entry_refuses_a_bad_session_name(web_host, client):
    """`.` and `..` were taken as session names (a path's here and parent, and a web page
    that is no conversation); empty, control characters and over 64 were refused already.
    Every entry that takes a name says the allowed form."""
    url = base_url(web_host)
    for name in BAD_SESSIONS:
        entries = [
            ("/api/chat", {"session": name, "text": "hi"}),
            ("/api/chat/stream", {"session": name, "text": "hi"}),
            ("/api/answer", {"session": name, "id": "q1", "answer": 1}),
        ]
        if isinstance(name, str):  # a query string carries text only
            entries += [("/api/events", None), ("/api/history", None)]
        for path, body in entries:
            if body is None:
                request = client.get(url + path, params={"session": name})
            else:
                request = client.post(url + path, json=body)
            async with request as response:
                assert response.status == 400, (name, path)
                error = (await response.json())["error"]
                assert "session must be" in error and "not only dots" in error, error
    async with client.post(url + "/api/chat", json={"session": "a.b-c_1", "text": "help"}) as ok:
        assert ok.status == 200


async def test_feedback_acknowledges_events_and_refuses_bad_input(web_host, client):
    from bothost.models import Event

    event_id = await ingest_one(web_host.events, Event("ops", "alert", {"summary": "x"}))
    url = base_url(web_host) + "/api/feedback"
    async with client.post(url, json={"action": "ack", "event_ids": [event_id]}) as response:
        assert (await response.json()) == {"ok": True, "changed": 1}
    for body in (
        {"action": "delete", "event_ids": [1]},
        {"action": "ack", "event_ids": []},
        {"action": "snooze", "event_ids": [1], "minutes": -5},
        {"action": "ack", "event_ids": [True]},
    ):
        async with client.post(url, json=body) as response:
            assert response.status == 400, body


async def test_prompt_is_answered_by_the_core_in_the_web_chat(web_host, client):
    url = base_url(web_host)  # this host runs no MCP servers: the answer says so
    async with client.post(url + "/api/chat", json={"session": "p", "text": "/prompt"}) as response:
        reply = (await response.json())["reply"]
    assert reply == "MCP servers are not running in this process, so there are no prompts."
