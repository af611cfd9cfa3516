"""An admin is sent a login link in a Slack DM when a remote MCP server needs an OAuth login.

The fake Slack records the DM (``conversations.open`` + ``chat.postMessage`` with a Block Kit
``button`` carrying a ``url``); the remote server is tests/mcp/oauth_server.py, which is its
own authorization server and approves at once; the admin's browser is an aiohttp client.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from tests.helpers import until
from tests.mcp.oauth_server import OAuthMcpServer
from tests.slack.harness import ADMIN, ALICE

WAIT = 10.0


@pytest.fixture
async def protected():
    server = OAuthMcpServer()
    await server.start()
    yield server
    await server.stop()


def login_button(call: Any) -> dict[str, Any] | None:
    for block in call.args.get("blocks") or []:
        for element in block.get("elements") or []:
            if element.get("type") == "button" and element.get("url"):
                return element
    return None


def state(host: Any, name: str) -> str:
    return next((s.state for s in host.mcp.status() if s.name == name), "")


async def test_an_admin_gets_a_dm_whose_button_logs_the_server_in_once(
    start_bot, fake, protected, monkeypatch
):
    monkeypatch.setattr("bothost.mcp.runner.LOGIN_POLL", 0.05)
    bot = await start_bot({"mode": "http", "allowed_users": [ALICE]}, with_mcp=True)
    host = bot.host
    base = f"http://127.0.0.1:{host.http.port}"
    host.config.platforms.web.public_url = base  # the port is the system's choice
    # the path register_mcp and the dashboard take
    await host.add_mcp_server("notes", _remote(protected.url), "register_mcp", settle=WAIT)
    opened = await fake.wait_call("conversations.open")
    assert opened.args["users"] == ADMIN
    dm = await fake.wait_call("chat.postMessage", lambda a: a["channel"] == f"D{ADMIN}")
    button = login_button(dm)
    assert button is not None, dm.args
    link = button["url"]
    assert link.startswith(f"{base}/oauth/start/notes?t=")
    assert "state=" not in link and protected.base not in link  # nothing that finishes a login
    assert "notes" in dm.args["text"]

    async with aiohttp.ClientSession() as http:
        async with http.get(link) as resp:  # the admin's browser: our host, the AS, back
            assert resp.status == 200 and "Logged in" in await resp.text()
        await until(lambda: state(host, "notes") == "ready", WAIT)
        result = await host.mcp.call_tool("notes", "read_note", {})
        assert (result.is_error, result.text) == (False, "read_note done")
        async with http.get(link) as resp:  # the same link later, from Slack's history
            assert resp.status == 410
            assert "used" in await resp.text()
        forged = link[:-4] + ("AAAA" if not link.endswith("AAAA") else "BBBB")
        async with http.get(forged) as resp:
            assert resp.status == 403
            assert "not a login link" in await resp.text()
    assert len(protected.authorizations) == 1  # the reused and forged links began nothing
    # ALICE may talk to the bot but is no admin: no DM was opened for her
    assert [c.args["users"] for c in fake.called("conversations.open")] == [ADMIN]


async def test_without_a_public_address_the_dm_says_how_to_log_in_from_the_cli(
    start_bot, fake, protected
):
    bot = await start_bot({"mode": "http"}, with_mcp=True)
    host = bot.host
    await host.add_mcp_server("notes", _remote(protected.url), "register_mcp", settle=WAIT)
    dm = await fake.wait_call("chat.postMessage", lambda a: a["channel"] == f"D{ADMIN}")
    assert login_button(dm) is None
    assert "bothost mcp login notes" in dm.args["text"]
    assert "platforms.web.public_url" in dm.args["text"]
    # told once per spell: the host's start-up sweep and the runner's notice are one DM
    await host.tell_login_needed("notes", "again")
    assert len(fake.called("conversations.open")) == 1


def _remote(url: str) -> Any:
    from bothost.config import McpServerConfig

    return McpServerConfig(url=url)
