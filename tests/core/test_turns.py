"""Turn ownership: a turn ends in a Reply with an outcome; `stop` cancels every turn of a
session (and, asked to, of every session in a channel); the console stops like the others."""

from __future__ import annotations

import asyncio

import pytest
from bothost.plugins.console.platform import converse

from bothost.api import HostApi, Outcome, Reply, is_stop
from bothost.hookspecs import hookimpl
from bothost.llm.base import LlmError
from bothost.models import Address, IncomingMessage
from tests.helpers import make_host, until


class StuckModel:
    """A model that never answers, so each turn runs until it is stopped."""

    def __init__(self) -> None:
        self.started = 0

    async def complete(self, request):
        self.started += 1
        await asyncio.Event().wait()


@pytest.fixture
async def host(home):
    host = make_host(home)
    await host.start(serve_http=False, platforms=False, mcp=False, tick=False)
    yield host
    await host.stop()


def say(text: str, where: str = "test:c1") -> IncomingMessage:
    return IncomingMessage(address=Address.parse(where), text=text, user="u1", is_admin=True)


def test_the_host_satisfies_the_interface(host):
    # the static check is the typed assignment in bothost/host/host.py (mypy); this one runs
    assert isinstance(host, HostApi)


def test_stop_words_are_recognised_in_one_place():
    assert is_stop(" Stop ") and is_stop("/stop") and is_stop("cancel")
    assert not is_stop("stop the deploy")


async def test_a_turn_replies_with_an_outcome(host):
    reply = await host.handle_message(say("help"))
    assert isinstance(reply, Reply) and reply.outcome is Outcome.REPLIED
    assert "offline agent" in reply.text


async def test_a_model_error_is_a_failed_outcome(host):
    async def broken(request):
        raise LlmError("401 from the model: check llm.api_key")

    host.llm.complete = broken
    reply = await host.handle_message(say("hello"))
    assert reply == Reply("401 from the model: check llm.api_key", Outcome.FAILED)


async def test_stop_with_nothing_running_says_so(host):
    reply = await host.handle_message(say("stop"))
    assert reply == Reply("Nothing is running.", Outcome.NOTHING_RUNNING)


async def test_stop_cancels_every_turn_of_the_session_and_no_other(host):
    model = StuckModel()
    host.llm.complete = model.complete
    turns = [
        asyncio.ensure_future(host.handle_message(say(text, where)))
        for text, where in (("one", "test:c1"), ("two", "test:c1"), ("three", "test:c2"))
    ]
    await until(lambda: model.started == 3)
    stop = await host.handle_message(say("stop"))
    assert stop == Reply("Stopped.", Outcome.STOPPED, (Address("test", "c1"),))
    async with asyncio.timeout(5):
        replies = await asyncio.gather(*turns[:2])
    assert [r.outcome for r in replies] == [Outcome.STOPPED, Outcome.STOPPED]
    assert not turns[2].done()
    assert host.cancel(Address("test", "c2")) == [Address("test", "c2")]
    async with asyncio.timeout(5):
        assert (await turns[2]).outcome is Outcome.STOPPED


async def test_cancel_within_a_channel_stops_each_of_its_threads(host):
    model = StuckModel()
    host.llm.complete = model.complete
    places = ["test:dm:1.0", "test:dm:2.0", "test:other:3.0"]
    turns = [asyncio.ensure_future(host.handle_message(say("slow", p))) for p in places]
    await until(lambda: model.started == 3)
    cancelled = host.cancel(Address("test", "dm"), within=True)
    assert sorted(map(str, cancelled)) == places[:2]
    async with asyncio.timeout(5):
        assert [r.outcome for r in await asyncio.gather(*turns[:2])] == [Outcome.STOPPED] * 2
    assert not turns[2].done()
    assert host.cancel(Address("test", "other"), within=True) == [Address.parse(places[2])]
    async with asyncio.timeout(5):
        await turns[2]
    assert host.cancel(Address("test", "dm"), within=True) == []


async def test_stop_at_the_console_cancels_both_running_turns(host, capsys):
    model = StuckModel()
    host.llm.complete = model.complete
    first = asyncio.ensure_future(converse(host, "summarise my inbox"))
    second = asyncio.ensure_future(converse(host, "and my calendar"))
    await until(lambda: model.started == 2)
    stop = await converse(host, "stop")
    assert stop.outcome is Outcome.STOPPED
    async with asyncio.timeout(5):
        replies = await asyncio.gather(first, second)
    assert [r.outcome for r in replies] == [Outcome.STOPPED, Outcome.STOPPED]
    assert capsys.readouterr().out.count("Stopped.") == 3


async def test_system_prompt_is_asked_before_each_request_to_the_model(home):
    # docs/plugins.md says when the hook runs: found from outside, a plugin author counting
    # calls saw two for one `call TOOL` turn (the call's round and the report's), where the
    # hook's docstring said "for each agent turn"
    asked = []

    class Prompting:
        @hookimpl
        def system_prompt(self, session):
            asked.append(session.id)
            return "Be brief."

    host = make_host(home, plugins=[Prompting()])
    await host.start(serve_http=False, platforms=False, mcp=False, tick=False)
    try:
        await host.handle_message(say("help"))
        assert asked == ["test:c1"]
        await host.handle_message(say('call events_list {"status": "pending"}'))
        assert asked == ["test:c1"] * 3  # one round to call the tool, one to report it
    finally:
        await host.stop()
