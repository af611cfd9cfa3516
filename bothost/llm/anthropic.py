"""The ``anthropic`` provider: the Messages API over HTTP, streamed.

Translates the neutral messages: the system prompt is a separate field, tool calls are
``tool_use`` blocks and consecutive tool results become one user message of ``tool_result``
blocks, as the API requires. The request is plain JSON over :mod:`bothost.llm.wire` rather
than through the official SDK, whose import alone took seconds (issue 39); tests/llm checks
both against one fake.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from bothost import redact
from bothost.llm.answer import Answer, unique_ids
from bothost.llm.base import (
    KEYS,
    ChatRequest,
    ChatResponse,
    StreamCutError,
    ToolCallRequest,
    Usage,
    UsageReportError,
    checked,
    load_json,
    missing_key,
    parse_arguments,
    token_count,
)
from bothost.llm.wire import WHOLE, Wire

# The API version every request names (the SDK's default): the events read below are its.
API_VERSION = "2023-06-01"


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, config: Any) -> None:
        self.config = config
        self.model = config.model or "claude-sonnet-4-5"
        self.base_url = config.base_url or "https://api.anthropic.com"
        # in messages (a chat, doctor, a Slack channel): no password or key= it may carry
        self.shown_url = redact.mask_url(self.base_url)
        headers = {"anthropic-version": API_VERSION}
        if config.api_key:
            headers["x-api-key"] = config.api_key
        self.wire = Wire(
            self.base_url,
            "v1/messages",
            headers,
            timeout=config.timeout,
            max_retries=config.max_retries,
            secret=config.api_key or "",
        )

    async def close(self) -> None:
        await self.wire.close()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        if (refused := missing_key(self.config, "anthropic", *KEYS["anthropic"])) is not None:
            raise refused
        params: dict[str, Any] = {
            "model": self.model,
            "system": request.system,
            "messages": to_wire(request.messages),
            "max_tokens": request.max_tokens,
            "stream": True,
        }
        if request.tools:
            params["tools"] = [
                {
                    "name": t["name"],
                    "description": t["description"],
                    "input_schema": t["parameters"],
                }
                for t in request.tools
            ]
        if self.config.temperature is not None:
            params["temperature"] = self.config.temperature
        async with contextlib.aclosing(self.wire.events(params)) as events:
            return await collect(events, request, self.shown_url, self.wire.describe_text)


# the events a Messages stream carries; `ping` and any other (a newer API's) are skipped
MESSAGE_EVENTS = {
    "message_start",
    "message_delta",
    "message_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
}


async def collect(
    events: Any, request: ChatRequest, url: str = "", clean: Any = str
) -> ChatResponse:
    """The answer of a Messages stream; :class:`StreamCutError` for an ``error`` event, a
    broken event or a stream with no ``message_stop``. ``clean`` makes a server's error
    message fit for a chat (one line, no key)."""
    answer = Answer(url, clean)
    response = ChatResponse()
    blocks: dict[int, dict[str, Any]] = {}
    finished = False
    async for sse in events:
        if sse.event == "error":  # an overloaded server, mid-answer
            raise StreamCutError(url, clean(error_text(sse.data))[:200])
        if sse.event == WHOLE:  # a server that ignored "stream"
            raise StreamCutError(url, "a whole answer, not the event stream that was asked")
        if sse.event not in MESSAGE_EVENTS:
            continue
        event = answer.loads(sse.data, "event")
        kind = sse.event
        finished = finished or kind == "message_stop"
        if kind == "message_start":
            read_usage(response, answer.mapping(event.get("message"), "message").get("usage"))
        elif kind == "content_block_start":
            start_block(blocks, event, answer)
        elif kind == "content_block_delta":
            delta = answer.mapping(event.get("delta"), "a delta")
            block = blocks.get(answer.index(event.get("index", 0), "a block's index"))
            if block is None:
                raise StreamCutError(url, "a delta of a block that never started")
            if delta.get("type") == "text_delta":
                text = answer.text(delta.get("text"), "a text delta")
                block["text"].append(text)
                if request.on_text:
                    await request.on_text(text)
            elif delta.get("type") == "input_json_delta":
                block["json"].append(answer.text(delta.get("partial_json"), "an input_json_delta"))
        elif kind == "message_delta":
            delta = answer.mapping(event.get("delta"), "a delta")
            response.stop_reason = answer.text(delta.get("stop_reason"), "stop_reason")
            read_usage(response, event.get("usage"))
    if not finished:  # every complete message ends with message_stop
        raise StreamCutError(url, "the stream ended with no message_stop")
    for index in sorted(blocks):
        block = blocks[index]
        if block["type"] == "text":
            response.text += "".join(block["text"])
        elif block["type"] == "tool_use":
            arguments, raw = parse_arguments("".join(block["json"]) or "{}")
            response.tool_calls.append(ToolCallRequest(block["id"], block["name"], arguments, raw))
    unique_ids(response.tool_calls)
    return response


def start_block(blocks: dict[int, dict[str, Any]], event: dict[str, Any], answer: Answer) -> None:
    """A ``content_block_start``: a new block at its index (which only orders the blocks)."""
    index = answer.index(event.get("index", 0), "a block's index")
    if index not in blocks:
        answer.room(len(blocks))
    block = answer.mapping(event.get("content_block"), "a content block")
    blocks[index] = {
        "type": answer.text(block.get("type"), "a block's type"),
        "text": [],  # parts, joined at the end: adding to a string copies it each time
        "json": [],
        "id": answer.text(block.get("id"), "a tool_use id") or f"toolu_{index}",
        "name": answer.text(block.get("name"), "a tool's name"),
    }


def error_text(data: str) -> str:
    """An ``error`` event's ``error.message`` (``{"type": "error", "error": {...}}``)."""
    try:
        error = load_json(data).get("error") or {}
        return str(error.get("message") or error.get("type") or data)
    except (ValueError, AttributeError):
        return data


def read_usage(response: ChatResponse, usage: Any) -> None:
    """The figures of a ``message_start`` or ``message_delta`` into ``response``; once one
    was no token count, the call's usage stays refused (the meter estimates it)."""
    if response.usage_refused:
        return
    try:
        response.usage = usage_of(usage, response.usage)
    except UsageReportError as exc:
        response.usage, response.usage_refused = None, str(exc)


def usage_of(usage: Any, before: Usage | None = None) -> Usage:
    """Our :class:`Usage` from an Anthropic ``usage`` object: a whole message's (or the
    ``message_start`` event's), or a ``message_delta``'s over ``before``.

    ``input_tokens`` counts only the prompt tokens that were neither read from nor written
    to the cache, so the three are added up. A delta's figures are cumulative and any of its
    input figures may be absent (null): those keep the start's value. Each figure is checked
    (the endpoint may be anything): :class:`UsageReportError` when one is no token count, or
    a start leaves out ``input_tokens`` or ``output_tokens``.
    """
    base = before or Usage()
    required = ("output_tokens",) if before else ("input_tokens", "output_tokens")
    figures = usage if isinstance(usage, Mapping) else {}

    def figure(name: str, default: int) -> int:
        value = figures.get(name)
        if value is None and name not in required:
            return default
        return token_count(name, value)

    read = figure("cache_read_input_tokens", base.cached)
    write = figure("cache_creation_input_tokens", base.cache_write)
    plain = figure("input_tokens", base.input - base.cached - base.cache_write)
    return checked(
        Usage(
            input=plain + read + write,
            output=figure("output_tokens", base.output),
            cached=read,
            cache_write=write,
        )
    )


def to_wire(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": m["tool_call_id"],
                "content": m.get("content", ""),
                "is_error": bool(m.get("is_error")),
            }
            if wire and wire[-1]["role"] == "user" and isinstance(wire[-1]["content"], list):
                wire[-1]["content"].append(block)
            else:
                wire.append({"role": "user", "content": [block]})
        elif m["role"] == "assistant":
            content: list[dict[str, Any]] = []
            if m.get("content"):
                content.append({"type": "text", "text": m["content"]})
            for c in m.get("tool_calls") or []:
                content.append(
                    {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]}
                )
            if content:
                wire.append({"role": "assistant", "content": content})
        else:
            wire.append({"role": "user", "content": m.get("content", "")})
    return merge_users(wire)


def merge_users(wire: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The API wants alternating roles: join neighbouring messages of the same role."""
    merged: list[dict[str, Any]] = []
    for m in wire:
        if merged and merged[-1]["role"] == m["role"]:
            merged[-1]["content"] = as_blocks(merged[-1]["content"]) + as_blocks(m["content"])
        else:
            merged.append(m)
    return merged


def as_blocks(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
