"""The ``openai`` provider: Chat Completions through the official SDK, streamed.

``llm.base_url`` makes it serve anything that speaks the same API: OpenAI, Ollama
(``http://localhost:11434/v1``, no key needed), vLLM, llama.cpp, LM Studio, OpenRouter. The
SDK retries 429 and 5xx with backoff; what is left becomes one clear :class:`LlmError` line.
"""

from __future__ import annotations

import json
from typing import Any

import openai

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

NO_KEY = "no-key"  # local servers (Ollama, llama.cpp) accept any key, the SDK demands one
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
        self.client = openai.AsyncOpenAI(
            api_key=config.api_key or NO_KEY,
            base_url=self.base_url,
            timeout=config.timeout,
            max_retries=config.max_retries,
        )

    async def close(self) -> None:
        await self.client.close()

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
        try:
            stream = await self.client.chat.completions.create(**params)
        except openai.APIStatusError as exc:
            raise LlmError(explain(exc.status_code, self.shown_url, exc)) from None
        except openai.APIConnectionError as exc:
            raise LlmError(f"cannot reach {self.shown_url}: {exc}; check llm.base_url") from None
        try:
            return await self.collect(stream, request)
        except openai.APIError as exc:  # the SDK's word for a body that broke off, or an
            # error event in the stream: the server was reached, so the URL is not at fault
            raise StreamCutError(self.shown_url, str(exc) or type(exc).__name__) from None

    async def collect(self, stream: Any, request: ChatRequest) -> ChatResponse:
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        response = ChatResponse()
        async for chunk in stream:
            if chunk.usage:  # the last chunk, asked for with stream_options.include_usage
                try:
                    response.usage, response.usage_refused = usage_of(chunk.usage), ""
                except UsageReportError as exc:  # the meter estimates the call instead
                    response.usage, response.usage_refused = None, str(exc)
            for choice in chunk.choices:
                delta = choice.delta
                if delta.content:
                    text.append(delta.content)
                    if request.on_text:
                        await request.on_text(delta.content)
                for call in delta.tool_calls or []:
                    slot = calls.setdefault(call.index, {"id": "", "name": "", "args": ""})
                    slot["id"] = call.id or slot["id"]
                    if call.function:
                        slot["name"] += call.function.name or ""
                        slot["args"] += call.function.arguments or ""
                if choice.finish_reason:
                    response.stop_reason = choice.finish_reason
        if not response.stop_reason:  # every choice ends with a finish_reason, even "length"
            raise StreamCutError(self.shown_url, "the stream ended with no finish_reason")
        response.text = "".join(text)
        for index in sorted(calls):
            slot = calls[index]
            arguments, raw = parse_arguments(slot["args"])
            response.tool_calls.append(
                ToolCallRequest(slot["id"] or f"call_{index}", slot["name"], arguments, raw)
            )
        return response


def usage_of(usage: Any) -> Usage | None:
    """Our :class:`Usage` from a Chat Completions ``usage`` object: a whole response's or
    the last streamed chunk's (the same shape). ``prompt_tokens`` already includes the
    cached tokens that ``prompt_tokens_details.cached_tokens`` counts.

    The SDK does not check a streamed chunk's figures, so each is checked here (the endpoint
    may be anything that speaks the API): :class:`UsageReportError` when one is no token
    count; the two the API always sends must be there, the details may be left out."""
    if usage is None:
        return None
    details = getattr(usage, "prompt_tokens_details", None)

    def detail(name: str) -> int:
        value = getattr(details, name, None)
        return 0 if value is None else token_count(f"prompt_tokens_details.{name}", value)

    return checked(
        Usage(
            input=token_count("prompt_tokens", getattr(usage, "prompt_tokens", None)),
            output=token_count("completion_tokens", getattr(usage, "completion_tokens", None)),
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
