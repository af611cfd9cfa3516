"""A scripted fake of the OpenAI Chat Completions and Anthropic Messages APIs on 127.0.0.1.

It speaks the real wire formats — JSON responses, Server-Sent-Events streams with text and
tool-call deltas, error bodies and ``retry-after`` — and tests/llm/test_sdk_peer.py drives
the official SDKs against it beside our providers, so the fake is checked by clients we did
not write. A test gives a script: each step is a dict (``{"text": …}``, ``{"tool_calls":
[{"name", "arguments"}]}``, ``{"status": 429, "retry_after": 0}``, ``{"hang": True}`` for a
model that never answers, until the fake stops; ``"cut": "eof"`` or ``"cut": "reset"`` with
a text or tool-call step for a stream that stops mid-way, after ``"cut_after"`` events (default
2): the body ends cleanly with no finish, or the connection is dropped; ``"cut": "error"``
sends the API's error event there, as an overloaded server does mid-answer) or a function of the
request body returning such a dict. Every request body is recorded in ``requests``. A ``retry_after`` goes out as the
``retry-after`` header with any status, a ``retry_after_ms`` as ``retry-after-ms``.

Token usage is reported as each API does, cached tokens included: ``usage`` (or a step's
``"usage"``) gives the figures in our neutral form — ``{"input", "output", "cached",
"cache_write"}``, ``input`` counting every prompt token — and each format says it its way
(OpenAI: ``prompt_tokens`` with ``prompt_tokens_details.cached_tokens``; Anthropic:
``input_tokens`` without the cache plus ``cache_read_input_tokens`` and
``cache_creation_input_tokens``, cumulative again in ``message_delta``). A step's
``"usage": None`` leaves usage out of an OpenAI stream, as servers that ignore
``stream_options`` do. A step's ``"wire_usage"`` is sent as the usage object exactly as
given, in both formats (Anthropic: in ``message_start`` and ``message_delta``), for a broken
endpoint's figures: ``{"prompt_tokens": -1000000, "completion_tokens": 5}``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from bothost.llm.openai import TOOL_ERROR_MARK
from tests.helpers import serve_app

Step = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]
CHUNK = 7  # characters per streamed text delta, small enough to see several deltas
DEFAULT_USAGE = {"input": 11, "output": 7}


def openai_usage(figures: dict[str, int]) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": figures["input"],
        "completion_tokens": figures["output"],
        "total_tokens": figures["input"] + figures["output"],
    }
    if "cached" in figures:
        usage["prompt_tokens_details"] = {"cached_tokens": figures["cached"], "audio_tokens": 0}
    return usage


def anthropic_usage(figures: dict[str, int], output: int | None = None) -> dict[str, Any]:
    read, write = figures.get("cached", 0), figures.get("cache_write", 0)
    return {
        "input_tokens": figures["input"] - read - write,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "output_tokens": figures["output"] if output is None else output,
    }


def openai_config(base_url: str, model: str = "m", api_key: str = "test-key") -> dict[str, Any]:
    """An ``llm:`` block for the openai provider at ``base_url`` (the fake's default key)."""
    return {"provider": "openai", "model": model, "base_url": base_url, "api_key": api_key}


# Chat Completions refuses a request offering more functions than this (its API reference:
# "A max of 128 functions are supported"), with the 400 below.
OPENAI_MAX_TOOLS = 128


class FakeLlm:
    def __init__(
        self,
        script: list[Step] | None = None,
        api_key: str = "test-key",
        usage: dict[str, int] | None = None,
    ) -> None:
        self.script = list(script or [])
        self.api_key = api_key
        self.usage = dict(usage or DEFAULT_USAGE)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.runner: web.AppRunner | None = None
        self.port = 0
        self.stopping = asyncio.Event()  # releases the requests of ``{"hang": True}`` steps

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def openai_config(self, model: str = "m") -> dict[str, Any]:
        """The ``llm:`` block that points the openai provider at this fake."""
        return openai_config(self.openai_url, model, self.api_key)

    async def start(self) -> FakeLlm:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.openai)
        app.router.add_post("/v1/messages", self.anthropic)
        self.runner, _ = await serve_app(app)
        self.port = self.runner.addresses[0][1]
        return self

    async def stop(self) -> None:
        self.stopping.set()
        if self.runner:
            await self.runner.cleanup()

    def next_step(self, body: dict[str, Any]) -> dict[str, Any]:
        if not self.script:
            return {"text": "(fake LLM: script exhausted)"}
        step = self.script.pop(0)
        return step(body) if callable(step) else step

    def error(self, step: dict[str, Any], flavour: str) -> web.Response:
        status = step["status"]
        retry = status == 429 or "retry_after" in step
        headers = {"retry-after": str(step.get("retry_after", 0))} if retry else {}
        if "retry_after_ms" in step:  # the SDKs' own header, read before retry-after
            headers["retry-after-ms"] = str(step["retry_after_ms"])
        message = step.get("message", f"fake error {status}")
        if flavour == "openai":
            body = {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "code": step.get("code"),
                }
            }
        else:
            kinds = {
                401: "authentication_error",
                404: "not_found_error",
                429: "rate_limit_error",
                529: "overloaded_error",
            }
            body = {
                "type": "error",
                "error": {"type": kinds.get(status, "api_error"), "message": message},
            }
        return web.json_response(body, status=status, headers=headers)

    # --- OpenAI Chat Completions --------------------------------------------------------------

    async def openai(self, request: web.Request) -> web.StreamResponse:
        try:
            return await self._openai(request)
        except StreamCutError as cut:
            return cut.response  # prepared and ended (or its connection dropped) mid-way

    async def _openai(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return self.error(
                {"status": 401, "message": "Incorrect API key provided", "code": "invalid_api_key"},
                "openai",
            )
        if len(body.get("tools") or []) > OPENAI_MAX_TOOLS:  # checked before any model runs
            tools = len(body["tools"])
            return self.error(
                {
                    "status": 400,
                    "message": f"Invalid 'tools': array too long. Expected an array with "
                    f"maximum length {OPENAI_MAX_TOOLS}, but got an array with length {tools} "
                    "instead.",
                    "code": "array_above_max_length",
                },
                "openai",
            )
        step = self.next_step(body)
        if step.get("hang"):  # a model that never answers: the client's deadline must act
            await self.stopping.wait()
            return web.Response(status=503)
        if "status" in step:
            return self.error(step, "openai")
        calls = [
            {
                "id": c.get("id", f"call_{i}"),
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
            }
            for i, c in enumerate(step.get("tool_calls", []))
        ]
        finish = "tool_calls" if calls else "stop"
        figures = step.get("usage", self.usage)
        usage = openai_usage(figures) if figures is not None else None
        usage = step.get("wire_usage", usage)
        base = {"id": "chatcmpl-fake", "created": int(time.time()), "model": body["model"]}
        if not body.get("stream"):
            message = {"role": "assistant", "content": step.get("text") or None}
            if calls:
                message["tool_calls"] = calls
            return web.json_response(
                {
                    **base,
                    "object": "chat.completion",
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    **({"usage": usage} if usage else {}),
                }
            )
        response = await sse_response(request)
        chunk = {**base, "object": "chat.completion.chunk"}
        cut = Cut(step, request, response, "openai")

        async def send(delta: dict[str, Any], finish_reason: str | None = None) -> None:
            data = {
                **chunk,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }
            await response.write(f"data: {json.dumps(data)}\n\n".encode())
            await cut.count()

        await send({"role": "assistant", "content": ""})
        text = step.get("text", "")
        for i in range(0, len(text), CHUNK):
            await send({"content": text[i : i + CHUNK]})
        for index, call in enumerate(calls):
            args = call["function"]["arguments"]
            await send(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["function"]["name"], "arguments": ""},
                        }
                    ]
                }
            )
            for i in range(0, len(args), CHUNK):
                await send(
                    {
                        "tool_calls": [
                            {"index": index, "function": {"arguments": args[i : i + CHUNK]}}
                        ]
                    }
                )
        await send({}, finish)
        if usage and (body.get("stream_options") or {}).get("include_usage"):
            await response.write(
                f"data: {json.dumps({**chunk, 'choices': [], 'usage': usage})}\n\n".encode()
            )
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    # --- Anthropic Messages -------------------------------------------------------------------

    async def anthropic(self, request: web.Request) -> web.StreamResponse:
        try:
            return await self._anthropic(request)
        except StreamCutError as cut:
            return cut.response  # prepared and ended (or its connection dropped) mid-way

    async def _anthropic(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        keys = {
            request.headers.get("x-api-key"),
            request.headers.get("Authorization", "").removeprefix("Bearer "),
        }
        if self.api_key not in keys:  # the SDK sends x-api-key or a bearer token
            return self.error({"status": 401, "message": "invalid x-api-key"}, "anthropic")
        step = self.next_step(body)
        if step.get("hang"):  # a model that never answers: the client's deadline must act
            await self.stopping.wait()
            return web.Response(status=503)
        if "status" in step:
            return self.error(step, "anthropic")
        blocks: list[dict[str, Any]] = []
        if step.get("text"):
            blocks.append({"type": "text", "text": step["text"]})
        for i, call in enumerate(step.get("tool_calls", [])):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.get("id", f"toolu_{i}"),
                    "name": call["name"],
                    "input": call["arguments"],
                }
            )
        stop = "tool_use" if step.get("tool_calls") else "end_turn"
        figures = step.get("usage") or self.usage
        usage = step.get("wire_usage") or anthropic_usage(figures)
        started = step.get("wire_usage") or anthropic_usage(figures, output=1)
        message = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "stop_reason": None,
            "stop_sequence": None,
        }
        if not body.get("stream"):
            return web.json_response(
                {**message, "content": blocks, "stop_reason": stop, "usage": usage}
            )
        response = await sse_response(request)
        cut = Cut(step, request, response, "anthropic")

        async def send(event: str, data: dict[str, Any]) -> None:
            await response.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
            await cut.count()

        await send(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    **message,
                    "content": [],
                    "usage": started,
                },
            },
        )
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                await send(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
                for i in range(0, len(block["text"]), CHUNK):
                    await send(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "text_delta", "text": block["text"][i : i + CHUNK]},
                        },
                    )
            else:
                await send(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {
                            "type": "tool_use",
                            "id": block["id"],
                            "name": block["name"],
                            "input": {},
                        },
                    },
                )
                args = json.dumps(block["input"])
                for i in range(0, len(args), CHUNK):
                    await send(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {
                                "type": "input_json_delta",
                                "partial_json": args[i : i + CHUNK],
                            },
                        },
                    )
            await send("content_block_stop", {"type": "content_block_stop", "index": index})
        await send(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": usage,  # cumulative, input figures included
            },
        )
        await send("message_stop", {"type": "message_stop"})
        await response.write_eof()
        return response


class StreamCutError(Exception):
    """Raised inside the fake's handler to stop a stream mid-way (a ``"cut"`` step)."""

    def __init__(self, response: web.StreamResponse) -> None:
        super().__init__("stream cut")
        self.response = response


class Cut:
    """Stops a stream after ``cut_after`` events: a clean end with no finish, a reset, or
    an error event (each API's own shape) and then the end."""

    def __init__(
        self,
        step: dict[str, Any],
        request: web.Request,
        response: web.StreamResponse,
        flavour: str,
    ) -> None:
        self.how = step.get("cut")
        self.left = step.get("cut_after", 2)
        self.request, self.response, self.flavour = request, response, flavour

    async def count(self) -> None:
        if self.how is None:
            return
        self.left -= 1
        if self.left > 0:
            return
        if self.how == "reset":
            transport = self.request.transport
            if transport is not None:
                transport.abort()  # the connection drops with the body unfinished
        else:
            if self.how == "error":
                await self.response.write(self.error_event())
            await self.response.write_eof()  # a complete HTTP body that simply ends early
        raise StreamCutError(self.response)

    def error_event(self) -> bytes:
        """What each API sends when it fails mid-answer (the SDKs raise on these)."""
        if self.flavour == "openai":  # a data line carrying an error object
            error = {"message": "The server had an error", "type": "server_error"}
            return f"data: {json.dumps({'error': error})}\n\n".encode()
        error = {"type": "overloaded_error", "message": "Overloaded"}
        return f"event: error\ndata: {json.dumps({'type': 'error', 'error': error})}\n\n".encode()


async def sse_response(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await response.prepare(request)
    return response


def last_tool_result(body: dict[str, Any]) -> str:
    """The newest tool result in a request, in either wire format (for scripted replies),
    without the mark the OpenAI format puts on a failed call's result (tests that check the
    mark read the request itself)."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "tool":
            return (message.get("content") or "").removeprefix(TOOL_ERROR_MARK)
        content = message.get("content")
        if isinstance(content, list):
            for block in reversed(content):
                if block.get("type") == "tool_result":
                    inner = block.get("content")
                    if isinstance(inner, list):
                        return "".join(b.get("text", "") for b in inner)
                    return inner or ""
    return ""
