"""One intake for every producer: an MCP server, a signed webhook, ``events push`` and a
plugin's ``ingest_event`` each go through the same ``event_received`` hooks, the same
per-source bound and the same dedupe; each keeps its own answer to a held event (the
server read no more until a tick makes room, a 429, a refused push, SourceHeldError)."""

from __future__ import annotations

import sys

import aiohttp
import pytest
from bothost.plugins.web.signing import new_secret

from bothost.api import SourceHeldError
from bothost.events.push import push_event
from bothost.hookspecs import hookimpl
from tests.helpers import make_host, until
from tests.mcp.mcp_helpers import PAGING_SERVER
from tests.web.conftest import base_url, signed

BOUND = 2
# what each door sends, in order: an event, its repeat, one a plugin drops, one that fills
# the source to its bound and one past it (the paging server numbers its events e0, e1, …)
STEPS = [
    [("event/a", "e0")],
    [("event/a", "e0")],
    [("event/drop", "e0")],
    [("event/a", "e0"), ("event/a", "e1")],
    [("event/a", "e0"), ("event/a", "e1"), ("event/a", "e2")],
]
ONE_BY_ONE = [
    ("event/a", "e0"),
    ("event/a", "e0"),
    ("event/drop", "e0"),
    ("event/a", "e1"),
    ("event/a", "e2"),
]


class Watcher:
    """Sees every event the hooks are asked about; drops ``event/drop``."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []

    @hookimpl
    def event_received(self, event):
        self.seen.append((event.source, event.type, event.payload.get("id")))
        return event.type != "event/drop"


@pytest.fixture
async def host(home):
    watcher, secret = Watcher(), new_secret()
    data = {
        "tick": {"max_pending_per_source": BOUND},
        "platforms": {"webhook": {"secret": secret}},
        "mcp": {"servers": {"pager": {"command": sys.executable, "args": [str(PAGING_SERVER)]}}},
    }
    host = make_host(home, data, plugins=[watcher])
    await host.start(tick=False)
    host.events.bounds.recheck = 0.0  # a held source is counted again at its next event
    host.watcher, host.secret = watcher, secret
    yield host
    await host.stop()


def stored(host, source: str) -> list[tuple[str, str]]:
    rows = host.store.call(
        lambda db: db.execute(
            "SELECT type, json_extract(payload, '$.id') FROM events WHERE source = ? ORDER BY id",
            [source],
        ).fetchall()
    )
    return [tuple(row) for row in rows]


def settle(host, source: str) -> None:
    """What a tick does to the events it triaged: they leave ``pending``."""
    host.store.call(
        lambda db: db.execute("UPDATE events SET status = 'done' WHERE source = ?", [source])
    )


async def plugin_door(host, type_: str, id_: str) -> str:
    try:
        row = await host.ingest_event("plug", type_, {"id": id_})
    except SourceHeldError:
        return "held"
    return "queued" if row is not None else "not queued"


async def push_door(host, type_: str, id_: str) -> str:
    pushed = await push_event(host, "cli", type_, {"id": id_})
    if pushed.refused and "bothost tick" in (pushed.why_not or ""):
        return "held"  # the command ends with exit 1 saying so
    return "queued" if pushed.event_id is not None else "not queued"


async def webhook_door(host, type_: str, id_: str) -> str:
    # a sender's retry is the same webhook id: the webhook's own dedupe
    body, headers = signed(
        host.secret, {"type": type_, "payload": {"id": id_}}, f"msg_{type_}{id_}"
    )
    url = base_url(host) + "/webhook/events/hook"
    async with aiohttp.ClientSession() as client:
        async with client.post(url, data=body, headers=headers) as response:
            answer = await response.json()
    if response.status == 429:
        return "held"
    assert response.status == 200, answer
    return "queued" if answer.get("event_id") else "not queued"


@pytest.mark.parametrize(
    ("door", "source"), [(plugin_door, "plug"), (push_door, "cli"), (webhook_door, "hook")]
)
async def test_each_door_sees_the_same_hooks_bound_and_dedupe(host, door, source):
    answers = [await door(host, type_, id_) for type_, id_ in ONE_BY_ONE]
    assert answers == [
        "queued",  # e0
        "not queued",  # e0 again: a duplicate
        "not queued",  # dropped by the plugin
        "queued",  # e1: the source is at its bound
        "held",  # e2: held, nothing stored
    ]
    assert stored(host, source) == [("event/a", "e0"), ("event/a", "e1")]
    seen = {(t, i) for s, t, i in host.watcher.seen if s == source}
    assert seen == {("event/a", "e0"), ("event/drop", "e0"), ("event/a", "e1"), ("event/a", "e2")}
    settle(host, source)  # a tick made room: the held event goes in when sent again
    assert await door(host, "event/a", "e2") == "queued"


async def test_an_mcp_servers_events_take_the_same_way_and_wait_at_the_bound(host):
    def seen(type_: str, id_: str) -> int:
        return host.watcher.seen.count(("pager", type_, id_))

    for batch in STEPS:  # the paging server numbers each push's events from e0
        (type_,) = {t for t, _ in batch}
        arguments = {"count": len(batch), "type": type_}
        assert (await host.mcp.call_tool("pager", "push", arguments)).text == "pushed"
    # the last push is held (its source at the bound): what the host read of it waits to be
    # written again, and the server is read no more until a tick makes room
    await until(lambda: seen("event/a", "e0") == 4 and len(stored(host, "pager")) == 2)
    assert seen("event/drop", "e0") == 1 and seen("event/a", "e2") <= 1
    assert stored(host, "pager") == [("event/a", "e0"), ("event/a", "e1")]
    settle(host, "pager")
    await until(lambda: len(stored(host, "pager")) == 3)
    assert stored(host, "pager")[-1] == ("event/a", "e2")
    # the held events were written again, not asked about again
    assert (seen("event/a", "e0"), seen("event/a", "e2")) == (4, 1)
