"""The offline agent (bothost.llm.offline) as a person meets it: commands in, answers out,
through a real host's turns."""

from __future__ import annotations

import pytest

from bothost.agent.registry import Group
from bothost.agent.tools import tool_from_function
from bothost.models import Address, IncomingMessage
from tests.helpers import make_host


class NotesSource:
    """A tool group as an MCP server would be one: granted per session by activate_tools."""

    def groups(self):
        return [Group("notes", "the team's notes", 1)]

    def tools(self, group):
        def notes_search(query: str) -> str:
            """Search the team's notes."""
            return f"notes about {query}"

        return [tool_from_function(notes_search, group="notes")]


def say(text: str) -> IncomingMessage:
    return IncomingMessage(address=Address("test", "c1"), text=text, user="u1", is_admin=True)


@pytest.fixture
async def host(home):
    host = make_host(home)
    await host.start(serve_http=False, platforms=False, mcp=False, tick=False)
    host.registry.add_source(NotesSource())
    yield host
    await host.stop()


def calls_made(host) -> list[str]:
    rows = host.store.call(
        lambda db: db.query("SELECT data FROM messages WHERE role = 'assistant' ORDER BY id")
    )
    return [r["data"] for r in rows if r["data"] and "tool_calls" in r["data"]]


async def test_calling_activate_tools_activates_once_and_answers(host):
    # Found from outside: `call activate_tools {"groups": [...]}` made the same call again
    # after each activation, until the turn stopped at its round limit ("Stopped after 12
    # rounds").
    reply = await host.handle_message(say('call activate_tools {"groups": ["notes"]}'))
    assert "Stopped after" not in reply.text
    assert "notes" in reply.text
    assert len(calls_made(host)) == 1  # one activation, then the answer
    # the group is granted: its tool is called at once, with no second activation
    reply = await host.handle_message(say('call notes_search {"query": "rota"}'))
    assert reply.text == "notes about rota"
    assert len(calls_made(host)) == 2


async def test_a_tool_of_an_inactive_group_is_activated_then_called(host):
    reply = await host.handle_message(say('call notes_search {"query": "rota"}'))
    assert reply.text == "notes about rota"
    assert len(calls_made(host)) == 2  # the activation, then the call asked for
