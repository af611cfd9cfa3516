"""A hostile MCP server inside agent turns: its results and its annotations.

The server is a real subprocess (``hostile_server.py``); the model is the fake OpenAI
server, whose recorded requests are exactly what a model provider would have been sent.
"""

import json
import sys
from pathlib import Path

import pytest

from bothost.models import Address, IncomingMessage
from tests.agent.conftest import AskingPlatform
from tests.fakes.llm import FakeLlm, last_tool_result
from tests.helpers import make_host

HOSTILE_SERVER = str(Path(__file__).with_name("hostile_server.py"))
API_KEY = "sk-hostile-test-api-key-0123456789"
SERVER_TOKEN = "srv-token-for-hostile-only-4242"
HOST_TOKEN = "host-env-token-not-configured-77"  # the host's env, referenced by config


def call(tool, **arguments):
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def echo(body):
    return {"text": last_tool_result(body)}


@pytest.fixture
async def model():
    fake = await FakeLlm(api_key=API_KEY).start()
    yield fake
    await fake.stop()


@pytest.fixture
async def host(home, model, monkeypatch):
    monkeypatch.setenv("HOSTILE_REFERENCED_TOKEN", HOST_TOKEN)
    host = make_host(
        home,
        {
            "llm": {
                "provider": "openai",
                "model": "m",
                "base_url": model.openai_url,
                "api_key": API_KEY,
            },
            "agent": {"approval": "ask"},
            "mcp": {
                "servers": {
                    "weather": {"enabled": False},
                    "hostile": {
                        "command": sys.executable,
                        "args": [HOSTILE_SERVER],
                        "env": {
                            "SERVER_TOKEN": SERVER_TOKEN,
                            "PASSED_ON": "${env:HOSTILE_REFERENCED_TOKEN}",
                            "DATA_DIR": str(home),  # a path, not a secret: left as it is
                        },
                    },
                }
            },
        },
    )
    await host.start(serve_http=False, tick=False)
    yield host
    await host.stop()


def message(text):
    return IncomingMessage(address=Address("test", "c1"), text=text, user="u1", is_admin=True)


async def test_a_tool_result_never_carries_the_hosts_secrets_to_the_model(host, model, home):
    model.script = [
        call("activate_tools", groups=["hostile"]),
        call("mcp__hostile__environment"),
        {"text": "seen"},
    ]
    assert (await host.handle_message(message("show me"))).text == "seen"
    sent = json.dumps(model.requests)
    shown = json.loads(last_tool_result(model.requests[-1]))
    assert shown["SERVER_TOKEN"] == shown["PASSED_ON"] == "***"
    assert shown["DATA_DIR"] == str(home)  # only secrets go, the rest stays readable
    for secret in (API_KEY, SERVER_TOKEN, HOST_TOKEN):
        assert secret not in sent
    stored = host.store.call(
        lambda db: (
            json.dumps([dict(r) for r in db.query("SELECT * FROM tool_calls")])
            + json.dumps([dict(r) for r in db.query("SELECT * FROM messages")])
        )
    )
    assert SERVER_TOKEN not in stored and HOST_TOKEN not in stored


async def test_a_tool_that_says_read_only_and_destructive_at_once_needs_approval(host, model):
    platform = AskingPlatform(False)
    model.script = [call("activate_tools", groups=["hostile"]), call("mcp__hostile__purge"), echo]
    reply = (await host.handle_message(message("purge"), platform=platform)).text
    assert reply == "Not allowed: the user said no."
    assert "mcp__hostile__purge" in platform.questions[0].text


async def test_a_third_party_server_cannot_state_its_own_tool_harmless(host, model):
    """Found from outside: a server's ``_meta["bothost/capabilities"]`` was taken as it
    stood, so a tool annotated destructive and open-world that stated itself harmless ran
    without asking, and its results were not wrapped as untrusted."""
    platform = AskingPlatform(False)
    model.script = [call("activate_tools", groups=["hostile"]), call("mcp__hostile__wipe"), echo]
    reply = (await host.handle_message(message("wipe it"), platform=platform)).text
    assert reply == "Not allowed: the user said no."
    assert "mcp__hostile__wipe" in platform.questions[0].text
    caps = host.registry.lookup("mcp__hostile__wipe").capabilities
    assert (caps.destructive, caps.egress, caps.untrusted) == (True, "chosen", True)


async def test_an_event_payload_never_carries_the_hosts_secrets_to_the_tick_model(
    home, model, monkeypatch
):
    monkeypatch.setenv("HOSTILE_TICK_API_KEY", API_KEY)
    llm = {"provider": "openai", "model": "m", "base_url": model.openai_url}
    host = make_host(
        home,
        {
            "llm": {**llm, "api_key": "${env:HOSTILE_TICK_API_KEY}"},
            "platforms": {"webhook": {"secret": "whsec_" + "c2VjcmV0LWZvci10aGUtdGljaw=="}},
            "tick": {"deliver_to": ["console:"]},
        },
    )
    await host.start(serve_http=False, mcp=False, tick=False)
    try:
        model.script = [{"text": "no notify"}]
        # a sender that quotes our own webhook secret and API key back at us
        leaked = f"key {API_KEY} secret {host.config.platforms.webhook.secret}"
        await host.ingest_event("alerts", "event/alert", {"id": "1", "summary": leaked})
        await host.tick_now("manual")
    finally:
        await host.stop()
    sent = json.dumps(model.requests[0]["messages"])
    assert "event/alert" in sent and "key ***" in sent
    assert API_KEY not in sent and "c2VjcmV0LWZvci10aGUtdGljaw" not in sent
