"""A platform's conversations: each session cut at its ``/new``s, listed newest first with
its first line, and each one's transcript readable on its own (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from bothost.models import Address, IncomingMessage
from tests.conftest import both_backends
from tests.helpers import make_host

pytestmark = both_backends


@pytest.fixture
async def host(home, store_target):
    on_postgres = isinstance(store_target, str)
    host = make_host(home, {"store": {"url": store_target}} if on_postgres else None)
    await host.start(serve_http=False, platforms=False, mcp=False, tick=False)
    yield host
    await host.stop()


async def say(host, address: Address, text: str) -> None:
    await host.handle_message(IncomingMessage(address=address, text=text, user="ana"))


async def test_each_new_starts_a_listed_conversation(host):
    here, there = Address("web", "a"), Address("web", "b")
    await say(host, here, "help\nand more")
    await say(host, here, "/new")
    await say(host, here, "/new")  # twice running: nothing between them is listed
    await say(host, here, "tools")
    await say(host, there, "help")
    await say(host, Address("console", ""), "help")  # another platform's
    listed = await host.queries.conversations("web")
    assert [(c.channel, c.current, c.first) for c in listed] == [
        ("b", True, "help"),
        ("a", True, "tools"),
        ("a", False, "help"),
    ]
    earlier = listed[2]
    assert earlier.start == 0 and earlier.messages == 2 and earlier.session == "web:a"
    assert listed[1].start > 0 and listed[1].updated_at >= earlier.updated_at
    first = await host.queries.transcript(here, start=earlier.start)
    assert [(m.role, m.text.split("\n")[0]) for m in first][0] == ("user", "help")
    assert len(first) == 2
    now = await host.queries.transcript(here, start=listed[1].start)
    assert [m.text for m in now] == [m.text for m in await host.queries.transcript(here)]
    assert now[0].text == "tools"


async def test_a_fresh_conversation_with_nothing_said_is_listed_as_current(host):
    here = Address("web", "quiet")
    await say(host, here, "help")
    await say(host, here, "/new")
    listed = await host.queries.conversations("web")
    assert [(c.current, c.messages, c.first) for c in listed] == [(True, 0, ""), (False, 2, "help")]
