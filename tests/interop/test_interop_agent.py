"""Real MCP servers inside agent turns against the fake LLM: what the model is sent as each
tool result (text, structured, image and error results), in both wire formats."""

from __future__ import annotations

import pytest
import pytest_asyncio
from interop_cases import CASES, check_readable

from bothost.agent.mcp_tools import tool_name
from bothost.agent.untrusted import UNTRUSTED_OPEN, unwrap
from bothost.models import Address, IncomingMessage
from tests.fakes.llm import FakeLlm
from tests.helpers import make_host, until

pytestmark = pytest.mark.asyncio(loop_scope="module")
READY_BOUND = 60.0  # seconds for eight servers to start side by side on a busy machine


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fake_llm():
    fake = await FakeLlm().start()
    yield fake
    await fake.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def host(interop_home, interop_servers, fake_llm):
    """One host running every peer for the whole module (each server starts once)."""
    host = make_host(
        interop_home,
        {
            "llm": {
                "provider": "anthropic",  # its wire format says which results are errors
                "model": "fake-model",
                "base_url": fake_llm.anthropic_url,
                "api_key": "test-key",
            },
            # the cases read; "allow" keeps memory's and git's unannotated-looking tools from
            # asking a person who is not there
            "agent": {"approval": "allow"},
            "mcp": {"servers": interop_servers},
        },
    )
    await host.start(serve_http=False, tick=False)
    # a listening host starts its servers in the background; the cases need every one ready
    await until(lambda: not host.mcp.not_ready(), timeout=READY_BOUND)
    yield host
    await host.stop()


def call(tool, **arguments):
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def sent_tool_result(body) -> dict:
    """The newest tool_result block of an Anthropic Messages request."""
    for message in reversed(body["messages"]):
        content = message.get("content")
        if isinstance(content, list):
            for block in reversed(content):
                if block.get("type") == "tool_result":
                    return block
    raise AssertionError("no tool result was sent")


def block_text(block: dict) -> str:
    inner = block.get("content")
    if isinstance(inner, list):
        return "".join(b.get("text", "") for b in inner)
    return inner or ""


@pytest.mark.parametrize("case", [c for c in CASES if c.agent], ids=lambda c: c.id)
async def test_model_reads_what_a_person_would(case, places, host, fake_llm):
    fake_llm.script = [
        call("activate_tools", groups=[case.server]),
        call(tool_name(case.server, case.tool), **case.arguments(places)),
        {"text": "done"},
    ]
    fake_llm.requests.clear()
    message = IncomingMessage(address=Address("test", case.id), text="go", user="u1", is_admin=True)
    reply = await host.handle_message(message)
    assert reply.text == "done"
    block = sent_tool_result(fake_llm.requests[-1])
    assert bool(block.get("is_error")) == case.error
    sent = block_text(block)
    text = unwrap(sent)
    if case.server == "fetch" and not case.error:
        assert sent.startswith(UNTRUSTED_OPEN.format(source=tool_name("fetch", "fetch")))
    check_readable(case, text, places)
