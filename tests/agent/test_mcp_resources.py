"""Resources: listed (templates too) and read through two tools of the activated server.

Text contents reach the model as text, a blob as a /media/ link (never base64), all of it
wrapped as untrusted content; a read is size-bounded; failures are results a person can
read. The server is tests/mcp/servers/surface_server.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bothost.agent.untrusted import UNTRUSTED_OPEN
from bothost.mcp import resources
from bothost.models import Address, IncomingMessage
from tests.fakes.llm import last_tool_result
from tests.helpers import make_host

SURFACE = str(Path(__file__).resolve().parents[1] / "mcp" / "servers" / "surface_server.py")


def server(**env):
    return {"command": sys.executable, "args": [SURFACE], "env": env}


@pytest.fixture
async def host_with(home, fake_llm):
    hosts = []

    async def make(**servers):
        llm = fake_llm.openai_config()
        host = make_host(home, {"llm": llm, "mcp": {"servers": servers}})
        hosts.append(host)
        await host.start(serve_http=False, tick=False)
        return host

    yield make
    for host in hosts:
        await host.stop()


def call(tool, **arguments):
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


async def test_resource_tools_appear_only_for_servers_that_declare_resources(host_with):
    host = await host_with(s=server(), bare=server(CAPABILITIES="tools"))
    await host.registry.settle({"s", "bare"})  # as a turn does: servers start in the background
    names = [t.name for t in host.registry.group_tools("s")]
    assert names == ["mcp__s__list_resources", "mcp__s__noop", "mcp__s__read_resource"]
    assert [t.name for t in host.registry.group_tools("bare")] == ["mcp__bare__noop"]
    read = next(t for t in host.registry.group_tools("s") if t.name.endswith("read_resource"))
    assert read.capabilities.untrusted and read.capabilities.private
    assert not read.capabilities.side_effects


async def test_listing_follows_pages_and_shows_templates(host_with):
    host = await host_with(s=server())
    listed = await host.mcp.list_resources("s")
    assert not listed.is_error
    assert listed.text.splitlines() == [
        "Resources of s (read one with its uri):",
        "- note://today — Today's note (text/plain)",
        "- img://pixel — pixel (image/png, 70 B)",
        "- note://big — big: a very long text",
        "- note://gone — gone",
        "Resource templates of s (fill in the {…} parts, then read):",
        "- note://{day} — note of a day: any day's note",
    ]


async def test_reads_text_blob_big_and_missing(host_with, home):
    host = await host_with(s=server(BIG_CHARS=str(resources.MAX_TEXT + 10)))
    text = await host.mcp.read_resource("s", "note://today")
    assert text.text == "[resource note://today]\nBuy milk.\nCall Ana." and not text.is_error
    blob = await host.mcp.read_resource("s", "img://pixel")
    (saved,) = blob.media
    assert saved.parent == home / "media" and saved.read_bytes().startswith(b"\x89PNG")
    assert f"/media/{saved.name}" in blob.text and "iVBOR" not in blob.text  # no base64
    big = await host.mcp.read_resource("s", "note://big")
    assert len(big.text) < resources.MAX_TEXT + 200
    header = len("[resource note://big]\n")
    total = resources.MAX_TEXT + 10 + header
    assert big.text.endswith(
        f"\n[resource cut: {total - resources.MAX_TEXT} of {total} characters dropped]"
    )
    missing = await host.mcp.read_resource("s", "note://gone")
    assert missing.is_error
    assert missing.text == "reading note://gone from s failed: Resource not found: note://gone"


async def test_the_model_reads_a_resource_as_untrusted_content(host_with, fake_llm):
    host = await host_with(s=server())
    fake_llm.script = [
        call("activate_tools", groups=["s"]),
        call("mcp__s__read_resource", uri="note://today"),
        {"text": "done"},
    ]
    reply = await host.handle_message(
        IncomingMessage(address=Address("test", "c1"), text="read today's note", user="u1")
    )
    assert reply.text == "done"
    seen = last_tool_result(fake_llm.requests[-1])
    assert seen.startswith(UNTRUSTED_OPEN.format(source="mcp__s__read_resource"))
    assert "Buy milk.\nCall Ana." in seen


async def test_what_is_shown_follows_a_servers_list_changed(host_with, home):
    # resources and prompts are listed afresh each time they are asked for, so a server's
    # notifications/{resources,prompts}/list_changed has nothing stale to refresh; the
    # change is said in the server's log, where a person looking for it would look
    host = await host_with(s=server())
    assert "note://new" not in (await host.mcp.list_resources("s")).text
    assert "fresh" not in {p.name for p in await host.mcp.list_prompts("s")}
    assert (await host.mcp.call_tool("s", "add")).text == "added"
    assert "- note://new — new" in (await host.mcp.list_resources("s")).text.splitlines()
    assert "fresh" in {p.name for p in await host.mcp.list_prompts("s")}
    log = (home / "logs" / "mcp" / "s.log").read_text()
    assert "resources list changed" in log and "prompts list changed" in log
