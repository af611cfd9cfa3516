"""The ``openai`` provider: Chat Completions over HTTP, streamed.

``llm.base_url`` makes it serve anything that speaks the same API: OpenAI, Ollama
(``http://localhost:11434/v1``, no key needed), vLLM, llama.cpp, LM Studio, OpenRouter. The
request is plain JSON over :mod:`bothost.llm.wire` (which retries 429 and 5xx with the
official SDK's backoff) rather than through the SDK, whose import alone took longer than
the start of ``bothost chat`` should (issue 39); tests/llm checks both against one fake.
"""

from __future__ import annotations

import contextlib
import json
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
    missing_key,
    parse_arguments,
    token_count,
)
from bothost.llm.wire import WHOLE, Wire
from bothost.sse import SseEvent

NO_KEY = "no-key"  # local servers (Ollama, llama.cpp) accept any key, the SDK sent one too
# OpenAI's chat format has no error flag on a tool message (Anthropic's has `is_error`), so a
# failed call's result starts with this, or a model reads the failure as the tool's answer
TOOL_ERROR_MARK = "[tool error] "


class OpenAIProvider:
    name = "openai"

    def __init__(self, config: Any) -> None:
        self.config = config
        self.model = config.model or "gpt-4.1-mini"
        self.base_url = config.base_url or "https://api.openai.com/v1"
        # in messages (a chat, doctor, a Slack channel): no password or key= it may carry
        self.shown_url = redact.mask_url(self.base_url)
        self.wire = Wire(
            self.base_url,
            "chat/completions",
            {"Authorization": f"Bearer {config.api_key or NO_KEY}"},
            timeout=config.timeout,
            max_retries=config.max_retries,
            secret=config.api_key or "",
        )

    async def close(self) -> None:
        await self.wire.close()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        if (refused := missing_key(self.config, "openai", *KEYS["openai"])) is not None:
            raise refused
        params: dict[str, Any] = {
            "model": self.model,
            "messages": to_wire(request),
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": request.max_tokens,
        }
        if request.tools:
            params["tools"] = [{"type": "function", "function": t} for t in request.tools]
        if self.config.temperature is not None:
            params["temperature"] = self.config.temperature
        async with contextlib.aclosing(self.wire.events(params)) as events:
            return await self.collect(events, request)

    async def collect(self, events: Any, request: ChatRequest) -> ChatResponse:
        answer = Answer(self.shown_url, self.wire.describe_text)
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        response = ChatResponse()
        async for event in events:
            if event.data.startswith("[DONE]"):
                break
            chunk = self.chunk(event, answer)
            if event.event == WHOLE:  # a server that ignored "stream": its choices' messages
                chunk = as_chunk(chunk, answer)
            if chunk.get("usage"):  # the last chunk, asked for with stream_options.include_usage
                try:
                    response.usage, response.usage_refused = usage_of(chunk["usage"]), ""
                except UsageReportError as exc:  # the meter estimates the call instead
                    response.usage = None
                    response.usage_refused = self.wire.describe_text(str(exc))
            # the request leaves n at 1: a further choice is no part of this answer
            for choice in answer.items(chunk.get("choices"), "choices")[:1]:
                choice = answer.mapping(choice, "a choice")
                delta = answer.mapping(choice.get("delta"), "a delta")
                if content := answer.text(delta.get("content"), "content"):
                    text.append(content)
                    if request.on_text:
                        await request.on_text(content)
                for call in answer.items(delta.get("tool_calls"), "tool_calls"):
                    self.add_call(calls, answer.mapping(call, "a tool call"), answer)
                if reason := answer.text(choice.get("finish_reason"), "finish_reason"):
                    response.stop_reason = reason
        if not response.stop_reason:  # every choice ends with a finish_reason, even "length"
            raise StreamCutError(self.shown_url, "the stream ended with no finish_reason")
        response.text = "".join(text)
        for index in sorted(calls):
            slot = calls[index]
            arguments, raw = parse_arguments("".join(slot["args"]))
            response.tool_calls.append(
                ToolCallRequest(
                    slot["id"] or f"call_{index}", "".join(slot["name"]), arguments, raw
                )
            )
        unique_ids(response.tool_calls)
        return response

    @staticmethod
    def add_call(calls: dict[int, dict[str, Any]], call: dict[str, Any], answer: Answer) -> None:
        """A tool call's delta into its slot; ``index`` only orders the calls."""
        index = answer.index(call.get("index", 0), "a tool call's index")
        if index not in calls:
            answer.room(len(calls))
        # name and arguments in parts, joined at the end: adding to a string copies it each time
        slot = calls.setdefault(index, {"id": "", "name": [], "args": []})
        slot["id"] = answer.text(call.get("id"), "a tool call's id") or slot["id"]
        function = answer.mapping(call.get("function"), "a tool call's function")
        slot["name"].append(answer.text(function.get("name"), "a tool's name"))
        slot["args"].append(answer.text(function.get("arguments"), "a tool call's arguments"))

    def chunk(self, event: SseEvent, answer: Answer) -> dict[str, Any]:
        """One streamed chunk; an ``error`` in it (the SDK's rule) or a chunk that is no JSON
        object ends the answer as cut: the server was reached, so the URL is not at fault."""
        chunk = answer.loads(event.data, "chunk")
        if error := chunk.get("error"):
            message = error.get("message") if isinstance(error, dict) else None
            detail = self.wire.describe_text(str(message or error))[:200]
            raise StreamCutError(self.shown_url, detail)
        return chunk


def as_chunk(whole: dict[str, Any], answer: Answer) -> dict[str, Any]:
    """A whole (not streamed) completion as the one chunk that would have said it all."""
    choices = []
    for choice in answer.items(whole.get("choices"), "choices")[:1]:  # n is 1
        choice = answer.mapping(choice, "a choice")
        message = dict(answer.mapping(choice.get("message"), "a message"))
        calls = answer.items(message.get("tool_calls"), "tool_calls")
        message["tool_calls"] = [
            {**answer.mapping(call, "a tool call"), "index": i} for i, call in enumerate(calls)
        ]
        choices.append({"delta": message, "finish_reason": choice.get("finish_reason")})
    return {"choices": choices, "usage": whole.get("usage")}


def usage_of(usage: Any) -> Usage | None:
    """Our :class:`Usage` from a Chat Completions ``usage`` object: a whole response's or
    the last streamed chunk's (the same shape). ``prompt_tokens`` already includes the
    cached tokens that ``prompt_tokens_details.cached_tokens`` counts.

    Each figure is checked (the endpoint may be anything that speaks the API):
    :class:`UsageReportError` when one is no token count; the two the API always sends must
    be there, the details may be left out."""
    if usage is None:
        return None
    if not isinstance(usage, Mapping):
        raise UsageReportError(f"usage: {type(usage).__name__} {repr(usage)[:40]}")
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, Mapping) else {}

    def detail(name: str) -> int:
        value = details.get(name)
        return 0 if value is None else token_count(f"prompt_tokens_details.{name}", value)

    return checked(
        Usage(
            input=token_count("prompt_tokens", usage.get("prompt_tokens")),
            output=token_count("completion_tokens", usage.get("completion_tokens")),
            cached=detail("cached_tokens"),
            cache_write=detail("cache_write_tokens"),
        )
    )


def to_wire(request: ChatRequest) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = [{"role": "system", "content": request.system}]
    for m in request.messages:
        if m["role"] == "tool":
            text = m.get("content", "")
            if m.get("is_error"):  # the wire has no error flag: say it where the model reads
                text = f"{TOOL_ERROR_MARK}{text}"
            wire.append({"role": "tool", "tool_call_id": m["tool_call_id"], "content": text})
        elif m["role"] == "assistant" and m.get("tool_calls"):
            wire.append(
                {
                    "role": "assistant",
                    "content": m.get("content") or None,
                    "tool_calls": [
                        {
                            "id": c["id"],
                            "type": "function",
                            "function": {
                                "name": c["name"],
                                "arguments": json.dumps(c["arguments"]),
                            },
                        }
                        for c in m["tool_calls"]
                    ],
                }
            )
        else:
            wire.append({"role": m["role"], "content": m.get("content", "")})
    return wire
