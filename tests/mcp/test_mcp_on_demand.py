"""A command's MCP servers start when its turn needs their tools, not all at start (issue 19).

``bothost chat -m help`` started every enabled server (the bundled weather server's process
and its imports) for a turn that calls no tool, while README says MCP tools load on first
use. The host here is built as ``bothost chat`` builds its own; what the test reads is
which servers have been started, not how long anything took.
"""

from __future__ import annotations

import sys

from mcp_helpers import PAGING_SERVER

from bothost.models import Address, IncomingMessage
from tests.helpers import make_host


def server(description: str) -> dict:
    return {"command": sys.executable, "args": [str(PAGING_SERVER)], "description": description}


def states(host) -> dict[str, str]:
    """The enabled servers' states (the packaged config's disabled ones left out)."""
    return {s.name: s.state for s in host.mcp.status() if s.enabled}


def message(text: str) -> IncomingMessage:
    return IncomingMessage(address=Address("console", ""), text=text, user="me", is_admin=True)


async def test_a_commands_servers_start_when_a_turn_needs_their_tools(home):
    host = make_host(
        home,
        {
            "mcp": {
                "servers": {
                    "weather": {"enabled": False},  # the bundled one: not what is counted here
                    "one": server("the first server"),
                    "two": server("the second server"),
                }
            }
        },
    )
    # as `bothost chat` starts its host (bothost.host.serve.chat)
    await host.start(serve_http=False, platforms=False, tick=False, mcp_on_demand=True)
    try:
        reply = await host.handle_message(message("help"))
        assert "offline agent" in reply.text
        assert states(host) == {"one": "stopped", "two": "stopped"}
        assert not any(s.pid for s in host.mcp.status())
        # the groups table still offers them, described from the config, as starting
        groups = {g.name: g for g in host.registry.groups()}
        assert (groups["one"].description, groups["one"].status) == ("the first server", "starting")
        await host.registry.settle({"two"})  # what activating the group does
        assert states(host) == {"one": "stopped", "two": "ready"}
        reply = await host.handle_message(message("tools"))  # lists every server's tools
        assert "mcp__one__echo" in reply.text
        assert states(host) == {"one": "ready", "two": "ready"}
    finally:
        await host.stop()


def marked(mark) -> dict:
    """The paging server, started through a shell that first writes `mark`: whether the
    process was started is read from the disk, not from the host's own account of it."""
    return {
        "command": "/bin/sh",
        "args": [
            "-c",
            'touch "$0" && exec "$1" "$2"',
            str(mark),
            sys.executable,
            str(PAGING_SERVER),
        ],
    }


async def test_the_offline_call_starts_only_the_server_it_names(home, tmp_path):
    """`call mcp__one__echo …` started every configured server (the offline agent's catalog
    settled them all); it starts `one` alone, and a native tool's call starts none."""
    marks = {name: tmp_path / f"{name}.started" for name in ("one", "two", "three")}
    servers = {name: marked(mark) for name, mark in marks.items()}
    host = make_host(home, {"mcp": {"servers": {"weather": {"enabled": False}, **servers}}})
    await host.start(serve_http=False, platforms=False, tick=False, mcp_on_demand=True)
    try:
        reply = await host.handle_message(message('call events_list {"status": "pending"}'))
        assert "No events" in reply.text or "events" in reply.text.lower(), reply.text
        assert not any(mark.exists() for mark in marks.values())
        reply = await host.handle_message(message('call mcp__one__echo {"text": "hi"}'))
        assert "hi" in reply.text, reply.text
        assert marks["one"].exists()
        assert not marks["two"].exists() and not marks["three"].exists()
        reply = await host.handle_message(message('call mcp__nowhere__echo {"text": "hi"}'))
        assert not marks["two"].exists() and not marks["three"].exists()
    finally:
        await host.stop()
