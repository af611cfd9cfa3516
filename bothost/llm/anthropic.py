"""The ``anthropic`` provider: the Messages API through the official SDK, streamed.

Translates the neutral messages: the system prompt is a separate field, tool calls are
``tool_use`` blocks and consecutive tool results become one user message of ``tool_result``
blocks, as the API requires.
"""

from __future__ import annotations

import importlib
from typing import Any

import anthropic

from bothost import redact
from bothost.llm.base import (
    KEYS,
    ChatRequest,
    ChatResponse,
    LlmError,
    StreamCutError,
    ToolCallRequest,
    Usage,
    UsageReportError,
    checked,
    explain,
    missing_key,
    parse_arguments,
    token_count,
)


def transport_errors() -> tuple[type[Exception], ...]:
    """The errors of a response body that breaks off, from the HTTP library under the SDK.

    Unlike the OpenAI SDK, this one lets them through while a stream is read. Releases 2.x
    run on ``httpx2``, earlier ones on ``httpx``; both are looked for, so either works.
    """
    found = []
    for name in ("httpx2", "httpx"):
        try:
            found.append(importlib.import_module(name).TransportError)
        except ImportError:
            continue
    return tuple(found)


# what breaks a stream the server began: an error event in it, or the body breaking off
STREAM_ERRORS: tuple[type[Exception], ...] = (anthropic.APIError, *transport_errors())


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, config: Any) -> None:
        self.config = config
        self.model = config.model or "claude-sonnet-4-5"
        self.base_url = config.base_url or "https://api.anthropic.com"
        # in messages (a chat, doctor, a Slack channel): no password or key= it may carry
        self.shown_url = redact.mask_url(self.base_url)
        self.client = anthropic.AsyncAnthropic(
            api_key=config.api_key or "",
            base_url=self.base_url,
            timeout=config.timeout,
            max_retries=config.max_retries,
        )

    async def close(self) -> None:
        await self.client.close()

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
        try:
            stream = await self.client.messages.create(**params)
        except anthropic.APIStatusError as exc:
            raise LlmError(explain(exc.status_code, self.shown_url, exc)) from None
        except anthropic.APIConnectionError as exc:
            raise LlmError(f"cannot reach {self.shown_url}: {exc}; check llm.base_url") from None
        try:
            return await collect(stream, request, self.shown_url)
        except STREAM_ERRORS as exc:  # the server was reached, so the URL is not at fault
            raise StreamCutError(self.shown_url, str(exc) or type(exc).__name__) from None


async def collect(stream: Any, request: ChatRequest, url: str = "") -> ChatResponse:
    response = ChatResponse()
    blocks: dict[int, dict[str, Any]] = {}
    finished = False
    async for event in stream:
        kind = event.type
        finished = finished or kind == "message_stop"
        if kind == "message_start":
            read_usage(response, event.message.usage)
        elif kind == "content_block_start":
            block = event.content_block
            blocks[event.index] = {
                "type": block.type,
                "text": "",
                "json": "",
                "id": getattr(block, "id", ""),
                "name": getattr(block, "name", ""),
            }
        elif kind == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                blocks[event.index]["text"] += delta.text
                if request.on_text:
                    await request.on_text(delta.text)
            elif delta.type == "input_json_delta":
                blocks[event.index]["json"] += delta.partial_json
        elif kind == "message_delta":
            response.stop_reason = event.delta.stop_reason or ""
            read_usage(response, event.usage)
    if not finished:  # every complete message ends with message_stop
        raise StreamCutError(url, "the stream ended with no message_stop")
    for index in sorted(blocks):
        block = blocks[index]
        if block["type"] == "text":
            response.text += block["text"]
        elif block["type"] == "tool_use":
            arguments, raw = parse_arguments(block["json"] or "{}")
            response.tool_calls.append(ToolCallRequest(block["id"], block["name"], arguments, raw))
    return response


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
    input figures may be absent (null): those keep the start's value. The SDK does not check
    a streamed event's figures, so each is checked here: :class:`UsageReportError` when one
    is no token count, or a start leaves out ``input_tokens`` or ``output_tokens``.
    """
    base = before or Usage()
    required = ("output_tokens",) if before else ("input_tokens", "output_tokens")

    def figure(name: str, default: int) -> int:
        value = getattr(usage, name, None)
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
