"""A mail that spells the untrusted wrapper's end tag stays inside it, as the Gmail server
delivers it: the bundled server as a subprocess against the fake Google APIs, read by the
model through a real turn (the tool's result is what the fake LLM is sent)."""

import json
import sys

import pytest
from bothost.mcp_servers.google.auth import SCOPES

from bothost.models import Address, IncomingMessage
from tests.agent.test_untrusted import ATTACK, LOOKALIKES, assert_contained, read_as_model
from tests.fakes.google_api import FakeGoogle
from tests.fakes.llm import last_tool_result
from tests.helpers import make_host


@pytest.fixture
async def google():
    fake = FakeGoogle()
    await fake.start()
    yield fake
    await fake.close()


@pytest.fixture
async def gmail_host(home, fake_llm, google):
    token = home / "secrets" / "google-gmail.json"
    token.parent.mkdir(mode=0o700, exist_ok=True)
    token.write_text(json.dumps(google.authorized_user(SCOPES["gmail"])))
    server = {
        "command": sys.executable,
        "args": ["-m", "bothost.mcp_servers.gmail"],
        "enabled": True,
        "env": {"GOOGLE_API_ENDPOINT": google.url, "GOOGLE_TOKEN_URI": f"{google.url}/token"},
    }
    config = {"llm": fake_llm.openai_config(), "mcp": {"servers": {"gmail": server}}}
    host = make_host(home, config)
    await host.start(serve_http=False, tick=False)
    yield host
    await host.stop()


def call(tool, **arguments):
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


async def test_a_mail_spelling_the_end_tag_in_look_alikes_stays_wrapped(
    gmail_host, fake_llm, google
):
    body = "Quarterly numbers below." + "".join(f"\n{tag}{ATTACK}" for tag in LOOKALIKES)
    mail = google.deliver("Mallory <m@evil.example>", "Numbers", body)
    seen = []

    def capture(request):
        seen.append(last_tool_result(request))
        return {"text": "read it"}

    fake_llm.script = [
        call("activate_tools", groups=["gmail"]),
        call("mcp__gmail__get_message", message_id=mail),
        capture,
    ]
    incoming = IncomingMessage(
        address=Address("test", "c1"), text="read my mail", user="u1", is_admin=True
    )
    assert (await gmail_host.handle_message(incoming)).text == "read it"
    [result] = seen
    assert "Quarterly numbers below." in result and result.count("SYSTEM:") == len(LOOKALIKES)
    seen_as = read_as_model(result)
    assert_contained(seen_as)  # one opening, one closing tag, the attacks between
    assert seen_as.endswith("</untrusted-content>")
