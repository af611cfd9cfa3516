"""The providers against a hostile or broken endpoint on 127.0.0.1.

``llm.base_url`` may name anything that claims to speak the API. Whatever it sends, a call
ends with one clear :class:`LlmError` line (never another exception, never the key), holds
a bounded amount of the answer in memory (``MAX_ANSWER_CHARS``, ``MAX_ANSWER_BYTES``) and
ends within a bounded time (``ANSWER_DEADLINE``).
"""

from __future__ import annotations

import asyncio
import json
import tracemalloc
import zlib
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from aiohttp import web

from bothost.config import LlmConfig
from bothost.llm.answer import MAX_ANSWER_CHARS, MAX_TOOL_CALLS
from bothost.llm.anthropic import AnthropicProvider
from bothost.llm.base import ChatRequest, LlmError, StreamCutError, parse_arguments
from bothost.llm.wire import MAX_ANSWER_BYTES, retried, retry_after
from tests.llm.test_wire import KEY, Server, provider

BOUND = 30  # seconds a test waits for an answer that must come far sooner
# The most a call may allocate at once against these servers (theirs in this process
# included): the answer's limit and the buffers that read it, well under the host's 64 MB.
PEAK = 32 * 1024 * 1024


@contextmanager
def peak() -> Iterator[list[int]]:
    """The most Python memory allocated at once inside the block, in bytes."""
    seen: list[int] = []
    tracemalloc.start()
    try:
        yield seen
    finally:
        seen.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()


def request(seen: list[str] | None = None) -> ChatRequest:
    chat = ChatRequest(system="s", messages=[{"role": "user", "content": "hi"}])
    if seen is not None:

        async def on_text(delta: str) -> None:
            seen.append(delta)

        chat.on_text = on_text
    return chat


async def ask(model, chat: ChatRequest | None = None):
    try:
        async with asyncio.timeout(BOUND):
            return await model.complete(chat or request())
    finally:
        await model.close()


def anthropic(url: str, **options) -> AnthropicProvider:
    options = {"api_key": KEY, "timeout": 0.5, "max_retries": 0, **options}
    return AnthropicProvider(LlmConfig(provider="anthropic", model="m", base_url=url, **options))


def stream(*chunks: bytes | str, content_type: str = "text/event-stream"):
    """A server answer that sends ``chunks`` and ends."""

    async def answer(server, req):
        response = web.StreamResponse(headers={"Content-Type": content_type})
        await response.prepare(req)
        for chunk in chunks:
            await response.write(chunk.encode() if isinstance(chunk, str) else chunk)
        return response

    return answer


def data(value) -> str:
    return f"data: {json.dumps(value)}\n\n"


def delta(**fields) -> str:
    return data({"choices": [{"index": 0, "delta": fields}]})


FINISH = data({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})


def endless(unit: bytes, total: int):
    """A server answer that writes ``unit`` until ``total`` bytes went, then waits for the
    test's end: what a client keeps reading until it stops by itself."""

    async def answer(server, req):
        server.written = 0
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(req)
        try:
            while server.written < total:
                await response.write(unit)
                server.written += len(unit)
            await server.release.wait()
        except (ConnectionError, asyncio.CancelledError):
            pass
        return response

    return answer


async def test_endless_text_deltas_end_at_the_answer_limit():
    unit = delta(content="x" * 4000).encode() * 16
    server = Server(endless(unit, 3 * MAX_ANSWER_CHARS))
    seen: list[str] = []
    with peak() as used:
        async with server as url:
            with pytest.raises(StreamCutError) as raised:
                await ask(provider(url), request(seen))
    assert f"{MAX_ANSWER_CHARS:,} characters" in str(raised.value)
    assert used[0] < PEAK, used
    assert sum(map(len, seen)) <= MAX_ANSWER_CHARS


async def test_endless_tool_arguments_end_at_the_answer_limit():
    start = {"index": 0, "id": "c", "function": {"name": "f", "arguments": ""}}
    more = delta(tool_calls=[{"index": 0, "function": {"arguments": "y" * 4000}}])
    server = Server(endless(delta(tool_calls=[start]).encode() + more.encode() * 64, 10**9))
    async with server as url:
        with pytest.raises(StreamCutError) as raised:
            await ask(provider(url))
    assert f"{MAX_ANSWER_CHARS:,} characters" in str(raised.value)


async def test_a_drip_of_keepalives_ends_at_the_answer_deadline():
    async def drip(server, req):
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(req)
        await response.write(delta(content="Hel").encode())
        while not server.release.is_set():  # well inside llm.timeout every time
            await response.write(b": still thinking\n")
            try:
                async with asyncio.timeout(0.05):
                    await server.release.wait()
            except TimeoutError:
                pass
        return response

    async with Server(drip) as url:
        model = provider(url, timeout=0.5)
        model.wire.deadline = 1.0
        with pytest.raises(StreamCutError) as raised:
            await ask(model)
    assert "not finished within 1 s" in str(raised.value)


async def test_a_100_mb_line_is_refused_after_a_bounded_read():
    server = Server(endless(b"data: " + b"x" * (1 << 20), 100 << 20))
    with peak() as used:
        async with server as url:
            with pytest.raises(StreamCutError) as raised:
                await ask(provider(url))
    assert "larger than" in str(raised.value) and used[0] < PEAK, used
    assert server.written < 100 << 20


async def test_a_gzip_bomb_is_read_no_further_than_the_answer_limit():
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip
    block = (b":" + b"p" * 65534 + b"\n") * 16  # 1 MB of comments, which the parser drops
    body = b"".join(packer.compress(block) for _ in range(2 * MAX_ANSWER_BYTES // len(block)))
    body += packer.flush()

    async def bomb(server, req):
        headers = {"Content-Type": "text/event-stream", "Content-Encoding": "gzip"}
        return web.Response(body=body, headers=headers)

    with peak() as used:
        async with Server(bomb) as url:
            with pytest.raises(StreamCutError) as raised:
                await ask(provider(url))
    assert f"{MAX_ANSWER_BYTES:,} bytes" in str(raised.value)
    assert used[0] < PEAK, used


async def test_an_html_page_is_no_answer():
    page = "<html><body>Sign in to the hotel wifi</body></html>"
    async with Server(stream(page, content_type="text/html")) as url:
        with pytest.raises(LlmError) as raised:
            await ask(provider(url))
    line = str(raised.value)
    assert not isinstance(raised.value, StreamCutError)
    assert "text/html" in line and "hotel wifi" in line and "check llm.base_url" in line


async def test_an_empty_answer_is_cut():
    async with Server(stream()) as url:
        with pytest.raises(StreamCutError):
            await ask(provider(url))


async def test_a_whole_json_completion_is_read_as_the_answer():
    """Some OpenAI-compatible servers ignore ``stream: true`` and answer in one object."""
    whole = {
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "Looking.",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        },
                        {
                            "id": "c2",
                            "type": "function",
                            "function": {"name": "g", "arguments": '{"a": 1}'},
                        },
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3},
    }
    seen: list[str] = []
    async with Server(stream(json.dumps(whole), content_type="application/json")) as url:
        answer = await ask(provider(url), request(seen))
    assert answer.text == "Looking." and seen == ["Looking."]
    assert [(c.id, c.name, c.arguments) for c in answer.tool_calls] == [
        ("c1", "f", {}),
        ("c2", "g", {"a": 1}),
    ]
    assert answer.stop_reason == "tool_calls" and answer.usage.input == 5


BROKEN_CHUNKS = {
    "nested 100,000 deep": "data: " + "[" * 100_000 + "\n\n",
    "choices not a list": data({"choices": "x"}),
    "a choice not an object": data({"choices": [7]}),
    "content a number": delta(content=5),
    "an index that is a list": delta(tool_calls=[{"index": [1], "function": {"name": "f"}}]),
    "an index of 1e999": "data: "
    + '{"choices": [{"delta": {"tool_calls": [{"index": 1e999}]}}]}'
    + "\n\n",
    "a negative index": delta(tool_calls=[{"index": -1, "function": {"name": "f"}}]),
    "a name that is an object": delta(tool_calls=[{"index": 0, "function": {"name": {}}}]),
    "an error that is deep": 'data: {"error": ' + "[" * 100_000 + "\n\n",
}


@pytest.mark.parametrize("chunk", BROKEN_CHUNKS.values(), ids=BROKEN_CHUNKS.keys())
async def test_a_chunk_of_the_wrong_shape_cuts_the_answer(chunk):
    async with Server(stream(chunk, FINISH)) as url:
        with pytest.raises(StreamCutError):
            await ask(provider(url))


async def test_invalid_utf8_reads_as_replacement_characters():
    chunk = b'data: {"choices": [{"index": 0, "delta": {"content": "caf\xc3"}}]}\n\n'
    async with Server(stream(chunk, FINISH)) as url:
        answer = await ask(provider(url))
    assert answer.text == "caf\ufffd"


async def test_a_broken_chunk_that_quotes_the_key_does_not_show_it():
    said = "invalid key, " + "p" * 55 + " " + KEY  # the key across the line's cut at 80
    async with Server(stream(f"data: {said}\n\n")) as url:
        with pytest.raises(StreamCutError) as raised:
            await ask(provider(url))
    assert KEY[:12] not in str(raised.value) and "invalid key, ppp" in str(raised.value)


async def test_a_usage_figure_that_quotes_the_key_is_not_kept():
    usage = data({"choices": [], "usage": {"prompt_tokens": KEY, "completion_tokens": 1}})
    async with Server(stream(delta(content="hi"), FINISH, usage)) as url:
        answer = await ask(provider(url))
    assert answer.usage is None and "prompt_tokens" in answer.usage_refused
    assert KEY[:12] not in answer.usage_refused


async def test_a_page_that_quotes_the_key_does_not_show_it():
    page = f"<html>Proxy: the key {KEY} is not allowed here</html>"
    async with Server(stream(page, content_type="text/html")) as url:
        with pytest.raises(LlmError) as raised:
            await ask(provider(url))
    assert KEY not in str(raised.value) and "the key *** is not" in str(raised.value)


async def test_ten_thousand_tool_calls_are_refused():
    calls = [
        {"index": i, "id": f"c{i}", "function": {"name": "f", "arguments": "{}"}}
        for i in range(10_000)
    ]
    async with Server(stream(delta(tool_calls=calls), FINISH)) as url:
        with pytest.raises(StreamCutError) as raised:
            await ask(provider(url))
    assert f"more than {MAX_TOOL_CALLS} tool calls" in str(raised.value)


async def test_tool_call_ids_are_unique_and_a_huge_index_is_only_an_order():
    calls = [
        {"index": 10**12, "id": "same", "function": {"name": "late", "arguments": "{}"}},
        {"index": 3, "id": "same", "function": {"name": "early", "arguments": "{}"}},
        {"index": 5, "function": {"name": "no_id", "arguments": "{}"}},
    ]
    async with Server(stream(delta(tool_calls=calls), FINISH)) as url:
        answer = await ask(provider(url))
    assert [c.name for c in answer.tool_calls] == ["early", "no_id", "late"]
    ids = [c.id for c in answer.tool_calls]
    assert len(set(ids)) == 3 and ids[0] == "same"


def test_arguments_nested_deep_or_infinite_are_kept_raw():
    for raw in ("[" * 100_000, '{"n": 1e999}', '{"n": NaN}', '{"n": -Infinity}'):
        assert parse_arguments(raw) == ({}, raw)


async def test_a_50_mb_error_body_is_read_only_in_part():
    async def huge(server, req):
        server.written = 0
        response = web.StreamResponse(status=500, headers={"Content-Type": "text/plain"})
        await response.prepare(req)
        try:
            while server.written < 50 << 20:
                await response.write(b"e" * (1 << 20))
                server.written += 1 << 20
        except (ConnectionError, asyncio.CancelledError):
            pass
        return response

    server = Server(huge)
    async with server as url:
        with pytest.raises(LlmError) as raised:
            await ask(provider(url))
    assert str(raised.value).startswith("500 from") and len(str(raised.value)) < 400
    assert server.written < 50 << 20


async def test_a_deep_error_body_is_one_line():
    async def deep(server, req):
        return web.Response(status=400, text='{"error": ' + "[" * 30_000)

    async with Server(deep) as url:
        with pytest.raises(LlmError) as raised:
            await ask(provider(url))
    assert str(raised.value).startswith("400 from")


def test_retry_after_of_any_size_or_garbage_is_bounded():
    for huge in (str(10**9), "inf", "1e999"):  # longer than a turn may wait: refused now
        assert not retried(429, {}, retry_after({"retry-after": huge})), huge
    for garbage in ("-5", "garbage", "nan", "", "0x10"):  # no usable wait: the backoff's
        assert retry_after({"retry-after": garbage}) is None, garbage
    assert retry_after({"retry-after-ms": "nan", "retry-after": "2"}) == 2


# The Anthropic event stream


def event(kind: str, value) -> str:
    return f"event: {kind}\ndata: {json.dumps(value)}\n\n"


START = event("message_start", {"message": {"usage": {"input_tokens": 1, "output_tokens": 0}}})
STOP = event("message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}})
STOP += event("message_stop", {})


async def test_endless_input_json_deltas_end_at_the_answer_limit():
    begin = event(
        "content_block_start",
        {"index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "f"}},
    )
    more = event(
        "content_block_delta",
        {"index": 0, "delta": {"type": "input_json_delta", "partial_json": "z" * 4000}},
    )
    server = Server(endless((START + begin).encode() + more.encode() * 64, 10**9))
    async with server as url:
        with pytest.raises(StreamCutError) as raised:
            await ask(anthropic(url))
    assert f"{MAX_ANSWER_CHARS:,} characters" in str(raised.value)


BROKEN_EVENTS = {
    "nested 100,000 deep": "event: message_start\ndata: " + "[" * 100_000 + "\n\n",
    "an error event nested deep": "event: error\ndata: " + '{"error": ' * 50_000 + "\n\n",
    "a block that is a string": event("content_block_start", {"index": 0, "content_block": "x"}),
    "an index that is a list": event(
        "content_block_start", {"index": [0], "content_block": {"type": "text"}}
    ),
    "a delta that is a list": event("content_block_delta", {"index": 0, "delta": []}),
    "a text that is a number": event(
        "content_block_start", {"index": 0, "content_block": {"type": "text"}}
    )
    + event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": 5}}),
}


@pytest.mark.parametrize("chunk", BROKEN_EVENTS.values(), ids=BROKEN_EVENTS.keys())
async def test_an_event_of_the_wrong_shape_cuts_the_answer(chunk):
    async with Server(stream(START, chunk, STOP)) as url:
        with pytest.raises(StreamCutError):
            await ask(anthropic(url))


async def test_ten_thousand_blocks_are_refused():
    blocks = "".join(
        event(
            "content_block_start",
            {"index": i, "content_block": {"type": "tool_use", "id": f"t{i}", "name": "f"}},
        )
        for i in range(10_000)
    )
    async with Server(stream(START, blocks, STOP)) as url:
        with pytest.raises(StreamCutError) as raised:
            await ask(anthropic(url))
    assert "tool calls" in str(raised.value) or "blocks" in str(raised.value)


async def test_an_anthropic_html_page_is_no_answer():
    async with Server(stream("<html>proxy login</html>", content_type="text/html")) as url:
        with pytest.raises(LlmError) as raised:
            await ask(anthropic(url))
    assert "text/html" in str(raised.value) and "check llm.base_url" in str(raised.value)


async def test_duplicate_tool_use_ids_are_made_unique():
    blocks = "".join(
        event(
            "content_block_start",
            {"index": i, "content_block": {"type": "tool_use", "id": "t", "name": "f"}},
        )
        for i in range(2)
    )
    async with Server(stream(START, blocks, STOP)) as url:
        answer = await ask(anthropic(url))
    assert len({c.id for c in answer.tool_calls}) == 2


# What the person sees, and what the conversation keeps


async def refuse_with_half_a_pair(server, req):
    return web.Response(status=400, text='{"error": {"message": "no \\ud800 here"}}')


HOSTILE = {
    "an error event quoting half a UTF-16 pair": stream(
        'data: {"error": {"message": "no \\udfff here"}}\n\n'
    ),
    "a 400 quoting half a UTF-16 pair": refuse_with_half_a_pair,
    "a captive portal's page": stream("<html>Sign in</html>", content_type="text/html"),
    "a chunk nested 100,000 deep": stream("data: " + "[" * 100_000 + "\n\n", FINISH),
    "ten thousand tool calls": stream(
        delta(tool_calls=[{"index": i, "function": {"name": "f"}} for i in range(10_000)]), FINISH
    ),
}


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
async def test_a_hostile_answer_is_one_line_and_the_message_stays(home, hostile):
    from bothost.api import Outcome
    from bothost.models import Address, IncomingMessage
    from tests.helpers import make_host

    async def answer(server, req):
        good = stream(delta(content="second answer"), FINISH)
        return await (hostile if len(server.headers) == 1 else good)(server, req)

    async with Server(answer) as url:
        llm = {"provider": "openai", "model": "m", "base_url": url, "api_key": KEY}
        host = make_host(home, {"llm": llm, "agent": {"approval": "allow"}})
        await host.start(serve_http=False, mcp=False, tick=False)
        try:
            said = IncomingMessage(address=Address("test", "c1"), text="tell me", user="u1")
            reply = await host.handle_message(said)
            rows = host.store.call(
                lambda db: db.execute("SELECT role, content FROM messages ORDER BY id").fetchall()
            )
            again = await host.handle_message(
                IncomingMessage(address=Address("test", "c1"), text="again", user="u1")
            )
        finally:
            await host.stop()
    assert reply.outcome == Outcome.FAILED and "\n" not in reply.text
    assert "Traceback" not in reply.text and KEY not in reply.text
    assert [tuple(r) for r in rows] == [("user", "tell me"), ("assistant", reply.text)]
    assert again.text == "second answer"


async def test_a_lone_surrogate_reads_as_a_replacement_character(home):
    """JSON may escape half of a UTF-16 pair (``\\ud800``): no store or platform takes it."""
    from bothost.models import Address, IncomingMessage
    from tests.helpers import make_host

    answer = stream('data: {"choices": [{"delta": {"content": "a\\ud800b"}}]}\n\n', FINISH)
    async with Server(answer) as url:
        llm = {"provider": "openai", "model": "m", "base_url": url, "api_key": KEY}
        host = make_host(home, {"llm": llm})
        await host.start(serve_http=False, mcp=False, tick=False)
        try:
            said = IncomingMessage(address=Address("test", "c1"), text="tell me", user="u1")
            reply = await host.handle_message(said)
        finally:
            await host.stop()
    assert reply.text == "a\ufffdb"


async def test_headers_dripped_a_byte_at_a_time_end_at_the_deadline():
    """aiohttp's read timeout restarts with every byte; only the call's deadline ends this."""
    stop = asyncio.Event()

    async def drip(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        try:
            while not stop.is_set():
                writer.write(b"a")
                await writer.drain()
                try:
                    async with asyncio.timeout(0.05):
                        await stop.wait()
                except TimeoutError:
                    pass
        except ConnectionError:
            pass
        writer.close()

    server = await asyncio.start_server(drip, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        model = provider(f"http://127.0.0.1:{port}/v1", timeout=0.5)
        model.wire.deadline = 1.0
        with pytest.raises(LlmError) as raised:
            await ask(model)
    finally:
        stop.set()
        server.close()
        await server.wait_closed()
    assert "no answer from http://127.0.0.1" in str(raised.value)
    assert "within 1 s" in str(raised.value)


MANY_EMPTY = '{"choices": [' + "{}," * 1_300_000 + "{}]}"  # 4 MB that parse into 1.3M dicts


@pytest.mark.parametrize("content_type", ["text/event-stream", "application/json"])
async def test_an_event_that_parses_into_millions_of_objects_is_not_parsed(content_type):
    body = f"data: {MANY_EMPTY}\n\n" if content_type == "text/event-stream" else MANY_EMPTY
    with peak() as used:
        async with Server(stream(body, content_type=content_type)) as url:
            with pytest.raises(StreamCutError) as raised:
                await ask(provider(url))
    assert "larger than" in str(raised.value) and used[0] < PEAK, used


async def test_only_the_first_choice_is_read():
    """The request leaves ``n`` at 1: further choices are no part of the answer, and a
    server's million of them would cost a million objects."""
    two = {
        "choices": [
            {"index": 0, "delta": {"content": "one"}},
            {"index": 1, "delta": {"content": "two"}},
        ]
    }
    async with Server(stream(data(two), FINISH)) as url:
        answer = await ask(provider(url))
    assert answer.text == "one"


async def test_an_anthropic_answer_sent_whole_is_one_line():
    whole = {
        "type": "message",
        "content": [{"type": "text", "text": "hi"}],
        "stop_reason": "end_turn",
    }
    async with Server(stream(json.dumps(whole), content_type="application/json")) as url:
        with pytest.raises(StreamCutError) as raised:
            await ask(anthropic(url))
    assert "a whole answer, not the event stream that was asked" in str(raised.value)
