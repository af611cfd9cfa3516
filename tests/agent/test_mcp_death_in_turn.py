"""A turn whose MCP server dies in the middle of a tool call.

The model reads a clear error result (the server exited), the person gets the model's
answer, the stored conversation pairs the call with that result, and the next turn calls the
restarted server normally.
"""

import sys
from pathlib import Path

import pytest

from bothost.models import Address, IncomingMessage
from tests.fakes.llm import last_tool_result
from tests.helpers import make_host

DYING = str(Path(__file__).with_name("dying_server.py"))


def message(text):
    return IncomingMessage(address=Address("test", "c1"), text=text, user="u1", is_admin=True)


def call(tool, **arguments):
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def echo(body):
    return {"text": "tool said: " + last_tool_result(body)}


@pytest.fixture
async def host(home, fake_llm, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    host = make_host(
        home,
        {
            "llm": {
                "provider": "openai",
                "model": "m",
                "base_url": fake_llm.openai_url,
                "api_key": "test-key",
            },
            "agent": {"approval": "allow"},
            "mcp": {
                "servers": {
                    "weather": {"enabled": False},
                    "dying": {
                        "command": sys.executable,
                        "args": [DYING],
                        "env_passthrough": ["PYTHONPATH"],
                    },
                }
            },
        },
    )
    await host.start(serve_http=False, tick=False)
    yield host
    await host.stop()


async def test_a_server_dying_mid_call_is_a_clear_result_and_the_next_turn_works(host, fake_llm):
    fake_llm.script = [call("activate_tools", groups=["dying"]), call("mcp__dying__die"), echo]
    reply = await host.handle_message(message("die"))
    assert reply.text.startswith("tool said: ") and "Traceback" not in reply.text
    said = reply.text.lower()
    assert "dying" in said and ("exit" in said or "died" in said), reply.text
    rows = host.store.call(
        lambda db: [r[0] for r in db.execute("SELECT role FROM messages ORDER BY id")]
    )
    assert rows == ["user", "assistant", "tool", "assistant", "tool", "assistant"], rows

    fake_llm.script = [call("mcp__dying__echo", text="back again"), echo]
    again = await host.handle_message(message("echo"))
    assert again.text == "tool said: back again"
