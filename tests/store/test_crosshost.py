"""Cross-host messages: two hosts on one PostgreSQL database, each with its own store
connection, listener connection and HTTP listener (two Host objects in one test process).

A briefing the tick leader delivers and a message the bot sends reach a web page held by the
other host; ``stop`` sent to one host cancels the turn running on the other; a listener whose
connection is killed comes back and still delivers what was written meanwhile. On SQLite
(one host) the same calls work in-process.
"""

from __future__ import annotations

import asyncio
import json
import logging

import aiohttp
import psycopg
import pytest

from bothost.api import Notice, Outcome
from bothost.crosshost import MAX_NOTICE_BYTES
from bothost.models import Address, Briefing, BriefingItem, IncomingMessage
from tests.conftest import both_backends
from tests.fakes.llm import FakeLlm
from tests.helpers import make_host, until
from tests.web.conftest import DANGER_PLUGIN, base_url
from tests.web.test_chat import next_event, sse_events


@pytest.fixture
async def fake():
    fake = await FakeLlm().start()
    yield fake
    await fake.stop()


async def start_hosts(tmp_path, url, fake, names=("a", "b")):
    """Hosts on one store: the first offline (its tick needs no model), the others on the
    fake model (their turns can be kept running)."""
    made = []
    for name in names:
        folder = tmp_path / name
        folder.mkdir(mode=0o700)
        llm = fake.openai_config()
        plugins = tmp_path / "plugins"
        plugins.mkdir(exist_ok=True)
        (plugins / "danger.py").write_text(DANGER_PLUGIN)  # a tool that asks for approval
        data = {
            "store": {"url": url},
            "plugins": {"dirs": [str(plugins)]},
            "agent": {"approval": "ask"},
            **({"llm": llm} if made else {}),
        }
        host = make_host(folder, data)
        await host.start(mcp=False, tick=False)
        made.append(host)
    return made


@pytest.fixture
async def hosts(tmp_path, postgres_url, fake):
    made = await start_hosts(tmp_path, postgres_url, fake)
    yield made
    for host in made:
        await host.stop()


@pytest.fixture
async def client():
    async with aiohttp.ClientSession() as session:
        yield session


def briefing(title: str) -> Briefing:
    return Briefing(
        title=title,
        text=f"{title}\n• db-1 disk at 95%",
        items=[BriefingItem("urgent", "db-1 disk at 95%")],
        targets=["web:briefings"],
    )


def say(where: str, text: str) -> IncomingMessage:
    return IncomingMessage(address=Address.parse(where), text=text, user="ana", is_admin=True)


async def test_what_the_leader_delivers_reaches_a_page_held_by_the_other_host(hosts, client):
    leader, other = hosts
    async with client.get(base_url(other) + "/api/events?session=ana") as page:
        stream = sse_events(page)
        await next_event(stream, "hello")
        await leader.ingest_event("ops", "event/alert", {"summary": "db-1 disk at 95%"})
        result = await leader.tick_now("test")
        assert result.briefings, result
        live = await next_event(stream, "briefing")
        assert "db-1 disk at 95%" in live["text"]
        await leader.platform("web").send(Address("web", "ana"), "the deploy finished")
        assert (await next_event(stream, "message"))["text"] == "the deploy finished"


async def test_stop_sent_to_one_host_cancels_the_turn_running_on_the_other(hosts, fake):
    here, there = hosts
    fake.script = [{"hang": True}]  # the model never answers: the turn runs until stopped
    running = asyncio.ensure_future(there.handle_message(say("web:slow", "think hard")))
    await until(lambda: len(fake.requests) == 1)
    stop = await asyncio.wait_for(here.handle_message(say("web:slow", "stop")), 10)
    assert stop.outcome is Outcome.STOPPED
    assert stop.cancelled == (Address("web", "slow"),)
    assert (await asyncio.wait_for(running, 10)).outcome is Outcome.STOPPED
    # with nothing running anywhere, every host answered and says so
    again = await asyncio.wait_for(here.handle_message(say("web:slow", "stop")), 10)
    assert again.outcome is Outcome.NOTHING_RUNNING


async def test_a_question_reaches_a_page_on_the_other_host_and_its_answer_comes_back(
    hosts, fake, client
):
    page_host, turn_host = hosts
    fake.script = [
        {"tool_calls": [{"name": "wipe_disk", "arguments": {"target": "scratch"}}]},
        {"text": "Done: scratch wiped."},
    ]
    async with client.get(base_url(page_host) + "/api/events?session=ana") as page:
        stream = sse_events(page)
        await next_event(stream, "hello")
        web = turn_host.platform("web")
        turn = asyncio.ensure_future(turn_host.handle_message(say("web:ana", "wipe"), platform=web))
        question = await next_event(stream, "question")
        assert "wipe_disk" in question["text"]
        async with client.post(
            base_url(page_host) + "/api/answer",
            json={"session": "ana", "id": question["id"], "answer": True},
        ) as response:
            assert response.status == 200
        reply = await asyncio.wait_for(turn, 10)
        assert (await next_event(stream, "question_closed"))["id"] == question["id"]
    assert reply.outcome is Outcome.REPLIED and reply.text == "Done: scratch wiped."
    assert "wiped scratch" in json.dumps(fake.requests[-1])


async def test_every_listening_host_answers_even_without_the_asked_part(
    hosts, tmp_path, postgres_url, caplog
):
    _, asking = hosts
    folder = tmp_path / "bare"
    folder.mkdir(mode=0o700)
    bare = make_host(folder, {"store": {"url": postgres_url}})
    await bare.start(serve_http=False, platforms=False, mcp=False, tick=False)  # no web part
    try:
        answers = await asking.crosshost.ask("web.pages", {"session": "nobody"})
    finally:
        await bare.stop()
    assert sorted(json.dumps(a) for a in answers) == ['{"pages": 0}', "{}"]
    assert "answered within" not in caplog.text  # nobody was waited for


async def test_a_dropped_listener_reconnects_and_what_was_sent_meanwhile_arrives(
    hosts, client, postgres_url, caplog
):
    leader, other = hosts
    gate = asyncio.Event()
    connect = other.crosshost.connect

    async def held():  # the listener's next connection waits until the briefing is sent
        await gate.wait()
        return await connect()

    other.crosshost.connect = held
    caplog.set_level(logging.INFO, logger="bothost.crosshost")
    async with client.get(base_url(other) + "/api/events?session=ana") as page:
        stream = sse_events(page)
        await next_event(stream, "hello")
        pid = other.crosshost.backend_pid
        await asyncio.to_thread(terminate, postgres_url, pid)
        await until(lambda: not other.crosshost.listening)
        async with client.get(base_url(other) + "/healthz") as response:
            assert (await response.json())["crosshost"]["ok"] is False
        await leader.deliver("web:briefings", briefing("While you were away"))
        gate.set()
        live = await next_event(stream, "briefing")
    assert live["title"] == "While you were away"
    assert other.crosshost.listening and other.crosshost.backend_pid != pid
    async with client.get(base_url(other) + "/healthz") as response:
        assert (await response.json())["crosshost"] == {"ok": True, "shared": True}
    assert "listener lost its connection" in caplog.text
    assert "listening again" in caplog.text


def terminate(url: str, pid: int) -> None:
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)


@both_backends
async def test_a_notice_reaches_this_hosts_subscribers_and_stays_small(
    tmp_path, store_target, fake
):
    url = store_target if isinstance(store_target, str) else str(store_target)
    (host,) = await start_hosts(tmp_path, url, fake, names=("solo",))
    try:
        got: list[Notice] = []

        async def handler(notice: Notice) -> None:
            got.append(notice)

        host.crosshost.subscribe("test.ping", handler)
        await host.crosshost.publish("test.ping", {"id": 7})
        await until(lambda: got)
        assert got == [Notice("test.ping", {"id": 7}, here=True)]
        with pytest.raises(ValueError, match="ids, not bodies"):
            await host.crosshost.publish("test.ping", {"body": "x" * MAX_NOTICE_BYTES})
    finally:
        await host.stop()
