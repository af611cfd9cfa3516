"""One running turn per session across hosts sharing a database; untouched inside one host."""

from __future__ import annotations

import asyncio

import pytest

from bothost.api import Outcome
from bothost.models import Address, IncomingMessage
from tests.conftest import both_backends
from tests.helpers import make_host, until

pytestmark = both_backends

HERE = Address("web", "shared")


@pytest.fixture
async def hosts(home, tmp_path, store_target):
    url = store_target if isinstance(store_target, str) else str(store_target)
    made = []
    for name in ("a", "b"):
        folder = tmp_path / name
        folder.mkdir(mode=0o700)
        host = make_host(folder, {"store": {"url": url}})
        await host.start(serve_http=False, platforms=False, mcp=False, tick=False)
        made.append(host)
    yield made
    for host in made:
        await host.stop()


def hello() -> IncomingMessage:
    return IncomingMessage(address=HERE, text="help", user="ana", is_admin=True)


async def test_a_turn_waits_while_another_host_runs_one_in_that_session(hosts, backend):
    first, second = hosts
    async with first.session_locks.hold(str(HERE), wait=5):  # as first's turn would
        waiting = asyncio.ensure_future(second.handle_message(hello()))
        if backend == "postgresql":
            await until(lambda: second.session_locks.waits >= 2)
            assert not waiting.done()
        else:  # one machine: nothing to wait for
            await asyncio.wait_for(asyncio.shield(waiting), 30)
    reply = await asyncio.wait_for(waiting, 30)
    assert reply.outcome == Outcome.REPLIED
    # the lock is given back: the first host's next turn runs at once
    assert (await asyncio.wait_for(first.handle_message(hello()), 30)).outcome == Outcome.REPLIED


async def test_turns_in_one_host_do_not_wait_for_each_other(hosts):
    first, _ = hosts
    replies = await asyncio.wait_for(
        asyncio.gather(*(first.handle_message(hello()) for _ in range(3))), 30
    )
    assert [r.outcome for r in replies] == [Outcome.REPLIED] * 3
    assert first.session_locks.waits == 0


async def test_a_turn_that_waited_too_long_says_so(hosts, backend):
    first, second = hosts
    second.config.agent.turn_timeout = 0.5
    async with first.session_locks.hold(str(HERE), wait=5):
        reply = await asyncio.wait_for(second.handle_message(hello()), 30)
    if backend == "postgresql":
        assert reply.outcome == Outcome.FAILED and "another host" in reply.text
    else:
        assert reply.outcome == Outcome.REPLIED
