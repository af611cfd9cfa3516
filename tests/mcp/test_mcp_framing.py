"""JSON-RPC decoding, the SSE parser, and elicitation defaults — the pure parts."""

from __future__ import annotations

import pytest

from bothost.mcp import jsonrpc
from bothost.mcp.elicitation import with_defaults
from bothost.mcp.stdio import refused_id
from bothost.sse import SseError, SseParser


def test_decode_accepts_string_and_numeric_ids_and_batches():
    assert jsonrpc.decode(b'{"jsonrpc":"2.0","id":"a-1","result":{}}')[0]["id"] == "a-1"
    batch = jsonrpc.decode('[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"x"}]')
    assert [jsonrpc.is_response(m) for m in batch] == [True, False]


@pytest.mark.parametrize(
    "line",
    [
        b"nope",
        b'{"jsonrpc":"1.0","id":1}',
        b'{"jsonrpc":"2.0"}',
        b'{"jsonrpc":"2.0","id":true,"result":{}}',
        b"[1]",
        b'{"jsonrpc":"2.0","method":5}',
        b'{"jsonrpc":"2.0","method":"event/x","params":"text"}',
        b"[" * 100_000 + b"]" * 100_000,
    ],
)
def test_decode_rejects_what_is_not_json_rpc(line):
    with pytest.raises(jsonrpc.ProtocolError):
        jsonrpc.decode(line)


def test_a_malformed_error_answer_still_becomes_an_error():
    error = jsonrpc.McpError.from_error({"code": "abc", "message": 7})
    assert error.code == jsonrpc.INTERNAL_ERROR and error.message == "7"


def test_sse_parser_joins_data_keeps_id_and_retry_across_chunks():
    parser = SseParser()
    events = parser.feed(b'id: 7\nretry: 500\ndata: \n\n: comment\nevent: message\ndata: {"a"')
    assert [(e.id, e.retry, e.data) for e in events] == [("7", 500, "")]
    events = parser.feed(b":1}\r\ndata: more\r\n\r\n")
    assert [(e.event, e.data, e.id) for e in events] == [("message", '{"a":1}\nmore', "7")]
    assert parser.last_id == "7" and parser.retry_ms == 500


def test_sse_parser_refuses_an_event_over_the_bound():
    parser = SseParser(max_bytes=1000)
    with pytest.raises(SseError):
        parser.feed(b"data: " + b"x" * 2000)


def test_elicitation_defaults_fill_only_missing_fields():
    schema = {
        "properties": {
            "name": {"type": "string", "default": "John"},
            "age": {"type": "integer", "default": 30},
            "tags": {"type": "array"},
        }
    }
    assert with_defaults(schema, {"name": "Ana", "tags": ["a"], "bad": {"x": 1}}) == {
        "name": "Ana",
        "age": 30,
        "tags": ["a"],
    }


@pytest.mark.parametrize(
    ("head", "tail", "expected"),
    [
        (b'{"jsonrpc": "2.0", "id": 7, "result": {"x', b'x"}}', 7),
        (b'{"result": {"content": [{"x', b'x"}]}, "jsonrpc": "2.0", "id": "a-1"}', "a-1"),
        (b'{"jsonrpc":"2.0","error":{"message":"x', b'x"},"id":-3}', -3),
        (b'{"result": {"x', b'x", "id": 5}}', None),  # a nested id is not the answer's
        (b'{"method": "event/x", "params": {"x', b'x"}, "jsonrpc": "2.0", "id": 4}', None),
    ],
)
def test_refused_id_is_found_at_either_end_of_a_top_level_answer(head, tail, expected):
    assert refused_id(head, tail) == expected


async def test_an_event_whose_params_are_not_an_object_is_dropped_not_queued_empty(caplog):
    # found from outside: a hostile server's `event/x` with params ["not", "an", "object"]
    # became an event with the payload {} (params_of's stand-in), which a briefing then
    # listed with nothing to say; MCP has no positional params
    import logging

    from bothost.mcp.inbound import Inbound

    got: list = []

    class Owner:
        async def events(self, items):
            got.extend(items)

    inbound = Inbound(Owner(), name="h", log=logging.getLogger("test.h"), roots=[])
    caplog.set_level(logging.WARNING)
    inbound.on_notification({"jsonrpc": "2.0", "method": "event/x", "params": ["a", "b"]})
    inbound.on_notification({"jsonrpc": "2.0", "method": "event/x", "params": {"id": "b"}})
    inbound.on_notification({"jsonrpc": "2.0", "method": "event/y"})  # no params: an event
    await inbound.drain()
    await inbound.close()
    assert got == [("event/x", {"id": "b"}), ("event/y", {})]
    assert "params that are not an object" in caplog.text


@pytest.mark.parametrize("newline", [b"\r", b"\n", b"\r\n"])
def test_sse_parser_ends_lines_at_cr_lf_or_crlf(newline):
    # the event-stream grammar ends a line at CRLF, a lone LF or a lone CR
    parser = SseParser()
    stream = b"id: 3" + newline + b"data: a" + newline + b"data: b" + newline + newline
    assert [(e.data, e.id) for e in parser.feed(stream)] == [("a\nb", "3")]


def test_sse_parser_reads_crlf_split_across_chunks_as_one_line_end():
    # a CR at a chunk's end may be half of a CRLF: the LF that follows is not a blank line
    parser = SseParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\ndata: b\r") == []
    assert [e.data for e in parser.feed(b"\n\r")] == ["a\nb"]
    assert [e.data for e in parser.feed(b"\ndata: c\r\r")] == ["c"]
