"""The stdio read path without a server: bytes split into lines, decoded, dispatched, and
``event/*`` notifications queued and handed over in batches (issue 19's fast path)."""

from __future__ import annotations

import asyncio
import json
import logging
import re

import pytest

from bothost.mcp import jsonrpc
from bothost.mcp.inbound import EVENT_BATCH, Inbound
from bothost.mcp.session import ClientSession
from bothost.mcp.stdio import StdioTransport

LOG = logging.getLogger("test-read-path")


def event_line(n: int) -> bytes:
    message = jsonrpc.notification("event/test", {"id": f"e{n}"})
    return json.dumps(message).encode() + b"\n"


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","method":"event/x"}\r',  # a server that writes CRLF
        b'  {"jsonrpc":"2.0","method":"event/x"}  ',
        b'\xef\xbb\xbf{"jsonrpc":"2.0","method":"event/x"}',  # a UTF-8 byte order mark
        '{"jsonrpc":"2.0","method":"event/x"}'.encode("utf-16"),
        '{"jsonrpc":"2.0","method":"event/x"}',
    ],
)
def test_decode_reads_what_json_loads_reads(line):
    assert jsonrpc.decode(line) == [{"jsonrpc": "2.0", "method": "event/x"}]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"jsonrpc":"2.0","method":"event/x"}{}', "Extra data"),
        (b'{"jsonrpc":"2.0","method":"event/x"} \x0b', "Extra data"),  # not JSON's space
        (b'{"jsonrpc":"2.0","method":"event/x"', "Expecting"),
        (b'{"jsonrpc":"2.0","method":"\xff"}', "not JSON"),
        (b"", "Expecting value"),
    ],
)
def test_decode_says_why_a_line_is_not_json(line, reason):
    with pytest.raises(jsonrpc.ProtocolError, match=reason):
        jsonrpc.decode(line)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"jsonrpc":"1.0","method":"event/x","params":{}}', "not a JSON-RPC 2.0"),
        (b'{"jsonrpc":"2.0","method":5,"params":{}}', "method is not a string"),
        (b'{"jsonrpc":"2.0","method":"event/x","params":{},"id":true}', "bad id"),
        (b'{"jsonrpc":"2.0","method":"event/x","params":"x"}', "neither an object"),
        (b'{"jsonrpc":"2.0","params":{}}', "neither a request"),
        (b'{"jsonrpc":"2.0","result":{}}', "without an id"),
    ],
)
def test_one_message_off_the_events_fast_path_gets_every_check(line, reason):
    # decode passes an event's notification on three look-ups; whatever differs from one
    # in any of them is checked in full, as a batch's members are
    with pytest.raises(jsonrpc.ProtocolError, match=reason):
        jsonrpc.decode(line)
    with pytest.raises(jsonrpc.ProtocolError, match=reason):
        jsonrpc.decode(b"[" + line + b"]")


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":1,"result":{}}',
        b'{"jsonrpc":"2.0","id":"1","result":{}}',
        b'{"jsonrpc":"2.0","id":1,"result":[]}',
        b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}',
        b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}',
        b'{"jsonrpc":"2.0","id":null,"result":{}}',
        b'{"jsonrpc":"2.0","id":1,"result":{},"method":5}',
        b'{"jsonrpc":"2.0","id":1,"result":{},"method":"x"}',
        b'{"jsonrpc":"2.0","id":1,"result":{},"params":"x"}',
        b'{"jsonrpc":"2.0","id":true,"result":{}}',
        b'{"jsonrpc":"2.0","id":1.5,"result":{}}',
        b'{"jsonrpc":"2.0","id":[1],"result":{}}',
        b'{"jsonrpc":"1.0","id":1,"result":{}}',
        b'{"id":1,"result":{}}',
        b'{"jsonrpc":"2.0","id":1}',
    ],
)
def test_an_answer_is_decoded_alone_as_in_a_batch(line):
    # decode passes an answer shaped as ours are answered (an int id, a result object, no
    # other member) on a few look-ups; whatever differs is checked in full, as in a batch
    try:
        alone = jsonrpc.decode(line)
    except jsonrpc.ProtocolError as exc:
        with pytest.raises(jsonrpc.ProtocolError, match=re.escape(str(exc))):
            jsonrpc.decode(b"[" + line + b"]")
    else:
        assert alone == jsonrpc.decode(b"[" + line + b"]") == [json.loads(line)]


@pytest.mark.parametrize(
    "message",
    [
        jsonrpc.request(7, "tools/call", {"name": "echo", "arguments": {"text": "ping"}}),
        jsonrpc.request("a-1", "x", {"é": ["ü\n\u2028", 1.5, -0.0, 10**30, None, True, {}]}),
        jsonrpc.notification("n", {"nan": float("nan"), "inf": float("-inf"), 1: 2, None: 3}),
        jsonrpc.result(1, {"t": (1, 2), "\x00": '"\\/'}),
    ],
)
def test_encode_writes_what_json_dumps_writes(message):
    expected = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    assert jsonrpc.encode(message) == expected.encode() + b"\n"


def test_encode_still_refuses_what_json_dumps_refuses():
    looped: dict = {"jsonrpc": "2.0", "method": "x", "params": {}}
    looped["params"]["self"] = looped
    with pytest.raises(ValueError, match="Circular reference"):
        jsonrpc.encode(looped)
    with pytest.raises(TypeError, match="not JSON serializable"):
        jsonrpc.encode(jsonrpc.notification("x", {"when": object()}))
    with pytest.raises(UnicodeEncodeError):  # a lone surrogate has no UTF-8
        jsonrpc.encode(jsonrpc.notification("x", {"text": "\ud800"}))
    # the markers are fresh per message, and an object met twice (not inside itself) is no loop
    shared = {"a": 1}
    message = jsonrpc.notification("x", {"one": shared, "two": shared})
    assert jsonrpc.encode(message).count(b'{"a":1}') == 2


async def test_an_event_without_params_is_queued_with_an_object_of_its_own():
    owner = Owner()
    inbound = Inbound(owner, name="t", log=LOG, roots=[])  # type: ignore[arg-type]
    inbound.on_notification(jsonrpc.notification("event/a"))
    inbound.on_notification(jsonrpc.notification("event/b"))
    await asyncio.wait_for(inbound.drain(), 10)
    await inbound.close()
    [(_, first), (_, second)] = owner.batches[0]
    assert first == second == {} and first is not second  # a hook may fill one in


class Owner:
    """The inbound side's session, taking event batches as they are handed over."""

    def __init__(self) -> None:
        self.batches: list[list[tuple[str, dict]]] = []

    async def events(self, items):
        self.batches.append(list(items))


async def test_a_backlog_over_a_batch_is_handed_over_in_order_and_its_bytes_released():
    owner = Owner()
    inbound = Inbound(owner, name="t", log=LOG, roots=[])  # type: ignore[arg-type]
    count = EVENT_BATCH + EVENT_BATCH // 2
    for n in range(count):  # all queued before the worker first runs
        inbound.on_notification(jsonrpc.notification("event/t", {"id": n}), size=10)
    room = inbound.room()  # past the high mark: the reader would pause until it has room
    assert room is not None
    await asyncio.wait_for(room, 10)
    await asyncio.wait_for(inbound.drain(), 10)
    assert [len(b) for b in owner.batches] == [EVENT_BATCH, EVENT_BATCH // 2]
    assert [p["id"] for b in owner.batches for _m, p in b] == list(range(count))
    assert owner.batches[0][0] == ("event/t", {"id": 0})
    assert inbound.room() is None and inbound._queued_bytes == 0
    await inbound.close()


async def test_lines_split_across_chunks_each_reach_the_session_once():
    got: list[tuple[str, dict]] = []

    async def on_events(events):
        got.extend((e.type, e.payload) for e in events)

    transport = StdioTransport("unused", [], {}, log=LOG)
    session = ClientSession(transport, name="t", log=LOG, on_events=on_events)
    transport._on_message = session._on_message
    data = b"".join(event_line(n) for n in range(50)) + b"\n   \n"
    for start in range(0, len(data), 7):  # lines cut at every place a pipe could cut them
        transport._feed(data[start : start + 7])
    await asyncio.wait_for(session.inbound.drain(), 10)
    assert [params["id"] for _m, params in got] == [f"e{n}" for n in range(50)]
    await session.inbound.close()
