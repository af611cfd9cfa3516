"""Tools reach the host only through HostApi: built-in, events and admin tools run against a
host that refuses every attribute the interface does not declare."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bothost.agent import spill
from bothost.agent.tools import ToolContext, ToolError
from bothost.api import HostApi
from bothost.models import Address, Session
from tests.helpers import make_host

CAPS_SERVER = str(Path(__file__).with_name("caps_server.py"))
DECLARED = {name for name in vars(HostApi) if not name.startswith("_")}


class InterfaceOnly:
    """The host as HostApi promises it, and nothing more."""

    def __init__(self, host) -> None:
        self._host = host

    def __getattr__(self, name):
        if name not in DECLARED:
            raise AttributeError(f"{name!r} is not part of bothost.api.HostApi")
        return getattr(self._host, name)


def context(host, admin=True) -> ToolContext:
    session = Session(id="test:tools", address=Address("test", "tools"), user="u1", is_admin=admin)
    return ToolContext(session=session, host=InterfaceOnly(host))


async def run(host, tool_name, ctx, **arguments):
    tool = host.registry.lookup(tool_name, ctx.session.is_admin)
    return await tool.run(arguments, ctx)


@pytest.fixture
async def host(home):
    host = make_host(home, {"tick": {"deliver_to": ["console:"]}})
    await host.start(serve_http=False, platforms=False, mcp=False, tick=False)
    yield host
    await host.stop()


async def test_builtin_tools_use_only_the_interface(host):
    ctx = context(host)
    granted = await run(host, "activate_tools", ctx, groups=["config"])
    assert granted.startswith("config: 4 tools now available")
    spill.save(host.home / "spill", "abcdef012345", "x" * 50, None)
    assert "x" * 50 in await run(host, "read_output", ctx, ref="abcdef012345")
    with pytest.raises(ToolError):
        await run(host, "read_output", ctx, ref="nosuchref000")


async def test_event_tools_use_only_the_interface(host, capsys):
    ctx = context(host)
    await host.ingest_event("gmail", "event/new_email", {"id": "1", "subject": "Hello"})
    listing = await run(host, "events_list", ctx, status="pending")
    assert listing == "#1 pending - gmail/event/new_email: Hello"
    briefing = await run(host, "tick_now", ctx)
    assert briefing.startswith("Briefing · ") and "Hello" in briefing


async def test_admin_tools_without_mcp_say_so(host):
    ctx = context(host)
    assert await run(host, "list_items", ctx) == []
    with pytest.raises(ToolError, match="not running"):
        await run(host, "toggle_item", ctx, name="weather", enabled=False)


async def test_admin_tools_change_mcp_servers_through_the_interface(home, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    host = make_host(home)
    await host.start(serve_http=False, platforms=False, tick=False)
    try:
        ctx = context(host)
        env = {"PYTHONPATH": str(Path(CAPS_SERVER).parents[2])}
        added = await run(
            host,
            "register_mcp",
            ctx,
            name="caps2",
            command=sys.executable,
            args=[CAPS_SERVER],
            env=env,
        )
        assert added.startswith("MCP server caps2: ready") and "5 tools" in added
        assert "caps2" in {s["name"] for s in await run(host, "list_items", ctx)}
        toggled = await run(host, "toggle_item", ctx, name="caps2", enabled=False)
        assert toggled.startswith("MCP server caps2: disabled")
        assert await run(host, "delete_mcp", ctx, name="caps2") == "MCP server caps2 removed."
        with pytest.raises(ToolError):
            await run(host, "delete_mcp", ctx, name="caps2")
    finally:
        await host.stop()
