"""URL-mode elicitation: a server's link is posted into the conversation, answered accept.

The server is an official SDK 2.x one (tests/agent/sampling_server.py, tool ``open_link``):
it sends ``elicitation/create`` with ``mode: "url"``, returns the action it got, then sends
``notifications/elicitation/complete``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from mcp_helpers import wait_for

from bothost.agent.mcp_tools import McpToolSource
from bothost.agent.tools import ToolContext
from bothost.config import McpServerConfig
from bothost.mcp.elicitation import link_problem
from bothost.mcp.manager import McpManager
from bothost.models import Address, Session
from bothost.store import Store, core_migrations

SERVER = Path(__file__).resolve().parents[1] / "agent" / "sampling_server.py"
WAIT = 15.0


class PostingPlatform:
    """A platform that records what is posted and asked."""

    def __init__(self) -> None:
        self.sent: list[tuple[Address, str]] = []
        self.asked: list[str] = []

    async def send(self, address, text, **kwargs):
        self.sent.append((address, text))

    async def ask(self, address, question):
        self.asked.append(question.text)
        return None


@pytest.fixture
async def linking(home):
    store = Store(home / "bothost.db", core_migrations())
    config = McpServerConfig(command=sys.executable, args=[str(SERVER)])
    manager = McpManager({"tracker": config}, store, home)
    await manager.start(wait=WAIT)
    source = McpToolSource(manager, SimpleNamespace(mcp=SimpleNamespace(servers={})))
    yield manager, {t.name: t for t in source.tools("tracker")}
    await manager.stop()
    store.close()


async def test_a_url_elicitation_is_shown_and_accepted(linking, home):
    manager, tools = linking
    declared = manager.runners["tracker"].session.client_capabilities()
    assert declared["elicitation"] == {"form": {}, "url": {}}
    platform = PostingPlatform()
    session = Session(id="web:ana", address=Address("web", "ana"), user="ana", platform=platform)
    result = await tools["mcp__tracker__open_link"].run({}, ToolContext(session=session, host=None))
    assert result.content == "accept"
    assert not platform.asked  # a link is shown, not asked
    [(address, text)] = platform.sent
    assert address == Address("web", "ana")
    assert text.startswith("MCP server tracker asks you to open a link on tracker.example.com:")
    assert "\nhttps://tracker.example.com/login?s=1\n" in text
    assert text.endswith("tracker says: Sign in to the tracker")
    log = home / "logs" / "mcp" / "tracker.log"
    await wait_for(lambda: "'el-1' from tracker complete" in log.read_text(), timeout=5)


async def test_with_nowhere_to_post_the_answer_is_cancel(linking):
    _manager, tools = linking
    session = Session(id="tick", address=Address("tick", "x"))  # no platform
    result = await tools["mcp__tracker__open_link"].run({}, ToolContext(session=session, host=None))
    assert result.content == "cancel"


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "https://user:pw@example.com/",
        "https://exa\u202emple.com/",
        "https://example.com/a b",
        "https:///nohost",
        "https://example.com/" + "a" * 3000,
    ],
)
def test_links_a_person_should_not_open_are_refused(url):
    assert link_problem(url) is not None


def test_a_plain_link_is_fine():
    assert link_problem("https://tracker.example.com/login?s=1") is None
