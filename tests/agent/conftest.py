import pytest

from bothost.models import Address, IncomingMessage
from tests.helpers import make_host


@pytest.fixture
async def openai_host(home, fake_llm):
    """A started host (no HTTP, no MCP) whose model is the fake OpenAI server."""
    host = make_host(
        home,
        {
            "llm": fake_llm.openai_config("fake-model"),
            "agent": {"approval": "ask"},
        },
    )
    await host.start(serve_http=False, mcp=False, tick=False)
    yield host
    await host.stop()


def message(text, user="ana", channel="c1"):
    return IncomingMessage(address=Address("test", channel), text=text, user=user)


def llm_config(fake_llm, provider):
    url = fake_llm.openai_url if provider == "openai" else fake_llm.anthropic_url
    return {"provider": provider, "model": "fake-model", "base_url": url, "api_key": "test-key"}


@pytest.fixture
async def started(home):
    """Start hosts (no HTTP, MCP or tick) from config data; all stopped at the end."""
    hosts = []

    async def start(data):
        host = make_host(home, data)
        await host.start(serve_http=False, mcp=False, tick=False)
        hosts.append(host)
        return host

    yield start
    for host in hosts:
        await host.stop()


def usage_rows(host):
    return host.store.call(lambda db: db.query("SELECT * FROM llm_usage ORDER BY id"))


class AskingPlatform:
    """A platform stand-in that answers approval questions with a preset answer."""

    name = "test"

    def __init__(self, answer):
        self.answer = answer
        self.questions = []

    async def ask(self, address, question):
        self.questions.append(question)
        return self.answer


class ListingManager:
    """Just enough of the MCP manager for McpToolSource.tools: one server's definitions."""

    def __init__(self, definitions):
        self.definitions = definitions

    def tools(self, group):
        return self.definitions

    def capabilities(self, group):
        return {}

    def source(self, group):
        return "0" * 16  # what the server runs, hashed: one program here

    def status(self):
        return []  # no other server whose tools' names could meet this one's
