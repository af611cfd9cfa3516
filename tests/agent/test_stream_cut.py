"""A model whose stream stops mid-way: the person is told, the transcript stays whole.

The fake model ends its Server-Sent-Events body early — either cleanly (the HTTP body is
complete but no finish reason or ``message_stop`` ever came) or by dropping the connection —
after a few deltas of text or of a tool call's arguments. A cut answer must not pass for a
finished one (nor run a tool on half its arguments): the person gets one clear line, the
stored conversation ends with that line after their message, and the next turn works.
"""

from __future__ import annotations

import pytest

from bothost.api import Outcome
from bothost.models import Address, IncomingMessage
from tests.helpers import make_host

TEXT = "The first half of a long answer, and then the second half that never arrives."


def message(text: str) -> IncomingMessage:
    return IncomingMessage(address=Address("test", "c1"), text=text, user="u1", is_admin=True)


@pytest.fixture(params=["openai", "anthropic"])
async def host(request, home, fake_llm):
    url = fake_llm.openai_url if request.param == "openai" else fake_llm.anthropic_url
    host = make_host(
        home,
        {
            "llm": {
                "provider": request.param,
                "model": "fake-model",
                "base_url": url,
                "api_key": "test-key",
            },
            "agent": {"approval": "allow"},
        },
    )
    await host.start(serve_http=False, mcp=False, tick=False)
    yield host
    await host.stop()


def transcript(host) -> list[tuple[str, str]]:
    return host.store.call(
        lambda db: [
            (r[0], r[1] or "")
            for r in db.execute("SELECT role, content FROM messages ORDER BY id").fetchall()
        ]
    )


@pytest.mark.parametrize("how", ["eof", "reset"])
@pytest.mark.parametrize("what", ["text", "tool call"])
async def test_a_stream_that_stops_mid_way_is_told_and_the_next_turn_works(
    host, fake_llm, how, what
):
    calls: list[str] = []

    def note(text: str) -> str:
        """Write a note down."""
        calls.append(text)
        return "noted"

    host.registry.register(note)
    if what == "text":
        step = {"text": TEXT, "cut": how, "cut_after": 4}
    else:
        step = {"tool_calls": [{"name": "note", "arguments": {"text": TEXT}}], "cut": how}
        step["cut_after"] = 4
    fake_llm.script = [step, {"text": "second answer"}]
    streamed: list[str] = []

    async def on_text(delta: str) -> None:
        streamed.append(delta)

    reply = await host.handle_message(message("tell me"), on_text=on_text)
    assert reply.outcome == Outcome.FAILED, reply
    assert "stopped mid-way" in reply.text and "Traceback" not in reply.text, reply.text
    assert calls == [], "a tool ran on the arguments of a cut answer"
    rows = transcript(host)
    assert rows[0] == ("user", "tell me") and rows[-1] == ("assistant", reply.text), rows
    assert len(rows) == 2, rows

    second = await host.handle_message(message("again"))
    assert second.text == "second answer" and second.outcome != Outcome.FAILED
    sent = fake_llm.requests[-1]["messages"]
    assert [m["role"] for m in sent if m["role"] != "system"][-1] == "user"
