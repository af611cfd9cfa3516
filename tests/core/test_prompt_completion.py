"""/prompt completion: names, argument names, and a server's suggestions (MCP completions),
through the core function and the web chat's GET /api/prompt/complete."""

from __future__ import annotations

import sys
from pathlib import Path

import aiohttp
import pytest

from bothost.agent.prompt_completion import candidates
from tests.helpers import make_host

SERVERS = Path(__file__).resolve().parents[1] / "mcp" / "servers"
COMPLETING = str(SERVERS / "completing_server.py")
PLAIN = str(SERVERS / "discover_only_server.py")  # no prompts, no completions


@pytest.fixture
async def host(home):
    host = make_host(
        home,
        {
            "mcp": {
                "servers": {
                    "wx": {"command": sys.executable, "args": [COMPLETING]},
                    "plain": {"command": sys.executable, "args": [PLAIN]},
                }
            }
        },
    )
    await host.start(tick=False)
    yield host
    await host.stop()


async def test_names_then_arguments_then_the_servers_values(host):
    manager = host.mcp
    assert await candidates("/prompt w", manager) == ["wx/"]
    assert await candidates("/prompt wx/fo", manager) == ["wx/forecast"]
    assert await candidates("/prompt wx/forecast ", manager) == ["city=", "days="]
    assert await candidates("/prompt wx/forecast ci", manager) == ["city="]
    # the hidden-character value is dropped; the one with a space comes back quoted
    assert await candidates("/prompt wx/forecast city=Zu", manager) == [
        "city=Zurich",
        "city=Zug",
        "city='Zurich West'",
    ]
    # what was typed before reaches the server as the request's context
    assert await candidates("/prompt wx/forecast city=Zug days=", manager) == ["days=Zug-7"]


async def test_nothing_for_what_cannot_be_completed(host):
    manager = host.mcp
    assert await candidates("hello", manager) == []
    assert await candidates("/prompt nope/x ", manager) == []
    assert await candidates('/prompt wx/forecast city="Zu', manager) == []  # open quote
    assert await candidates("/prompt wx/forecast weather=", manager) == []


async def test_the_web_chat_asks_the_same(host):
    url = f"http://127.0.0.1:{host.http.port}/api/prompt/complete"
    async with aiohttp.ClientSession() as client:
        async with client.get(url, params={"text": "/prompt wx/forecast city=Zer"}) as response:
            assert response.status == 200
            assert await response.json() == {"values": ["city=Zermatt"]}
