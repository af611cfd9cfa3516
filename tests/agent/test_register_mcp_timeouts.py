"""register_mcp takes a server's timeout and max_timeout as durations, checked like config."""

import sys
from pathlib import Path

import pytest

from bothost.mcp import stored
from bothost.models import Address, IncomingMessage
from tests.agent.conftest import AskingPlatform
from tests.fakes.llm import last_tool_result
from tests.helpers import make_host

CAPS_SERVER = str(Path(__file__).with_name("caps_server.py"))


def call(tool, **arguments):
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def echo(body):
    return {"text": last_tool_result(body)}


@pytest.fixture
async def admin_host(home, fake_llm):
    llm = fake_llm.openai_config()
    host = make_host(home, {"llm": llm, "agent": {"approval": "allow"}})
    await host.start(serve_http=False, tick=False)
    yield host
    await host.stop()


async def register(host, fake_llm, **timeouts):
    fake_llm.script = [
        call("activate_tools", groups=["config"]),
        call(
            "register_mcp",
            name="caps2",
            command=sys.executable,
            args=[CAPS_SERVER],
            env={"PYTHONPATH": str(Path(CAPS_SERVER).parents[2])},
            **timeouts,
        ),
        echo,
    ]
    text = IncomingMessage(address=Address("test", "c1"), text="add", user="u1", is_admin=True)
    return (await host.handle_message(text, platform=AskingPlatform(True))).text


async def test_register_mcp_stores_the_timeouts_it_was_given(admin_host, fake_llm):
    reply = await register(admin_host, fake_llm, timeout="90s", max_timeout="30m")
    assert reply.startswith("MCP server caps2: ready"), reply
    config = admin_host.store.call(lambda db: stored.load(db)["caps2"].config)
    assert (config.timeout, config.max_timeout) == (90, 1800)


async def test_register_mcp_refuses_timeouts_config_would_refuse(admin_host, fake_llm):
    reply = await register(admin_host, fake_llm, timeout="5m", max_timeout="1m")
    assert "max_timeout: expected at least the timeout (300 s), got 60 s" in reply
    assert "a duration such as" in await register(admin_host, fake_llm, timeout="soon")


async def test_register_mcp_gives_the_server_roots_checked_like_config(
    admin_host, fake_llm, tmp_path
):
    reply = await register(admin_host, fake_llm, roots=[str(tmp_path / "shared")])
    assert reply.startswith("MCP server caps2: ready"), reply
    config = admin_host.store.call(lambda db: stored.load(db)["caps2"].config)
    assert config.roots == [str(tmp_path / "shared")]
    reply = await register(admin_host, fake_llm, roots=["relative"])
    assert "caps2: roots[0]: expected an absolute path" in reply
