"""doctor's model probe fails fast (one request, one line); a turn's provider keeps the
SDK's retries. Counted on real 127.0.0.1 servers, never timed."""

from __future__ import annotations

import asyncio
import socket

import pytest
from aiohttp import web

from bothost.config import LlmConfig
from bothost.host.probes import ask_llm
from bothost.llm.base import ChatRequest, LlmError
from bothost.llm.plugin import anthropic_provider, openai_provider

PROVIDERS = {"openai": openai_provider, "anthropic": anthropic_provider}
PATHS = {"openai": "/v1", "anthropic": ""}


class Failing:
    """A 127.0.0.1 server that answers every request 500 (asking for a 1 ms retry wait)."""

    def __init__(self) -> None:
        self.requests = 0

    async def start(self) -> str:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.answer)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = self.runner.addresses[0][1]
        return f"http://127.0.0.1:{port}"

    async def answer(self, request: web.Request) -> web.Response:
        self.requests += 1
        return web.json_response(
            {"error": {"type": "api_error", "message": "down\nfor maintenance"}},
            status=500,
            headers={"retry-after-ms": "1"},
        )


@pytest.fixture
async def failing():
    server = Failing()
    url = await server.start()
    yield server, url
    await server.runner.cleanup()


def llm(name: str, url: str) -> LlmConfig:
    return LlmConfig(provider=name, model="m", api_key="k", base_url=url + PATHS[name])


@pytest.mark.parametrize("name", PROVIDERS)
async def test_the_probe_asks_once_and_says_so_in_one_line(name, failing):
    server, url = failing
    problem = await ask_llm(PROVIDERS[name], llm(name, url))
    assert server.requests == 1
    assert problem is not None and "500" in problem and "\n" not in problem


@pytest.mark.parametrize("name", PROVIDERS)
async def test_a_turn_keeps_the_providers_retries(name, failing):
    server, url = failing
    provider = PROVIDERS[name](llm(name, url))
    request = ChatRequest(system="s", messages=[{"role": "user", "content": "hi"}], max_tokens=1)
    try:
        with pytest.raises(LlmError):
            await provider.complete(request)
    finally:
        await provider.close()
    assert server.requests == 1 + LlmConfig().max_retries


@pytest.mark.parametrize("name", PROVIDERS)
async def test_the_probe_of_a_server_that_drops_connections_connects_once(name):
    accepted = 0

    async def drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal accepted
        accepted += 1
        writer.close()

    server = await asyncio.start_server(drop, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        problem = await ask_llm(PROVIDERS[name], llm(name, f"http://127.0.0.1:{port}"))
    finally:
        server.close()
        await server.wait_closed()
    assert accepted == 1
    assert problem is not None and "cannot reach" in problem and "\n" not in problem


@pytest.mark.parametrize("name", PROVIDERS)
async def test_the_probe_of_a_closed_port_is_one_line_naming_the_url(name):
    with socket.socket() as held:  # bound, never listening: connections are refused
        held.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{held.getsockname()[1]}"
        problem = await ask_llm(PROVIDERS[name], llm(name, url))
    assert problem is not None and url in problem and "\n" not in problem
