"""A remote server's OAuth secrets are masked where that server's output goes, not host-wide.

An authorization server chooses the tokens it issues, so a token is an attacker's string
as much as a secret: masked everywhere, a server issuing ``billing@evil.example`` would
blank that text in every other server's results and the transcript. Here two protected
servers (tests/mcp/oauth_server.py) are logged in; one issues that token and echoes the
Authorization header it gets, the other returns an invoice naming the same address.
"""

from __future__ import annotations

import asyncio
import json
import logging

import aiohttp
import pytest

from bothost import redact
from bothost.config import McpServerConfig
from bothost.mcp import commands
from bothost.mcp.manager import McpManager
from bothost.mcp.oauth.tokens import load_record
from bothost.mcp.serverlog import log_path
from bothost.models import Address, IncomingMessage
from bothost.store import Store, core_migrations
from tests.fakes.llm import FakeLlm
from tests.helpers import make_host
from tests.mcp.oauth_server import OAuthMcpServer

TOKEN = "billing@evil.example"
INVOICE = f"Invoice from {TOKEN}: please pay 500 CHF to {TOKEN} today."


@pytest.fixture
async def model():
    fake = await FakeLlm(api_key="sk-oauth-scope-test-key-0123456789").start()
    yield fake
    await fake.stop()


@pytest.fixture
async def servers():
    evil, mail = OAuthMcpServer(), OAuthMcpServer()
    evil.issued = [TOKEN]  # its authorization server's choice
    evil.results = {"read_note": "you sent {bearer}"}
    mail.results = {"read_note": INVOICE}
    await evil.start()
    await mail.start()
    yield {"evil": evil, "mail": mail}
    await evil.stop()
    await mail.stop()


async def log_in(home, servers) -> None:
    store = Store(home / "bothost.db", core_migrations())
    config = {name: McpServerConfig(url=server.url) for name, server in servers.items()}
    manager = McpManager(config, store, home)
    tasks: list[asyncio.Task] = []

    async def visit(url: str) -> None:
        async with aiohttp.ClientSession() as http, http.get(url) as resp:
            assert resp.status == 200, await resp.text()

    try:
        for name in servers:
            await commands.login(
                manager, name, None, lambda u: tasks.append(asyncio.create_task(visit(u)))
            )
            await asyncio.gather(*tasks)
        assert store.call(lambda db: load_record(db, "evil"))["access_token"] == TOKEN
    finally:
        store.close()


def call(tool, **arguments):
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def tool_results(model) -> list[str]:
    return [m["content"] for m in model.requests[-1]["messages"] if m.get("role") == "tool"]


async def test_a_servers_oauth_token_is_masked_in_its_own_output_and_the_log_only(
    home, model, servers
):
    await log_in(home, servers)
    llm = {"provider": "openai", "model": "m", "base_url": model.openai_url}
    mcp = {"weather": {"enabled": False}} | {n: {"url": s.url} for n, s in servers.items()}
    host = make_host(home, {"llm": {**llm, "api_key": model.api_key}, "mcp": {"servers": mcp}})
    await host.start(serve_http=False, tick=False)
    try:
        model.script = [
            call("activate_tools", groups=["mail", "evil"]),
            call("mcp__mail__read_note"),
            call("mcp__evil__read_note"),
            {"text": "seen"},
        ]
        message = IncomingMessage(address=Address("test", "c1"), text="mail?", user="u1")
        assert (await host.handle_message(message)).text == "seen"
        stored = host.store.call(
            lambda db: json.dumps([dict(r) for r in db.query("SELECT * FROM messages")])
        )
    finally:
        await host.stop()
    mail_result, evil_result = tool_results(model)[-2:]
    assert INVOICE in mail_result  # another server's text is left as it is
    assert INVOICE in stored  # and so is the transcript's
    assert TOKEN not in evil_result and "you sent Bearer ***" in evil_result
    assert f"you sent Bearer {TOKEN}" not in stored
    # the logs never hold the token, whatever writes it
    assert TOKEN not in redact.redact(f"refresh failed for {TOKEN}")
    records = logging.LogRecord("t", logging.INFO, __file__, 1, "token %s", (TOKEN,), None)
    assert redact.SecretFilter().filter(records) and TOKEN not in records.getMessage()
    assert TOKEN not in log_path(home, "evil").read_text()
