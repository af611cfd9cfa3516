"""``/prompt``: a person lists MCP servers' prompts and runs one as their turn.

Routed in the core (``Host.handle_message``), so every platform has it: these tests talk to
the host as a platform does, and once through the terminal (``bothost chat -m``). The server is tests/mcp/servers/surface_server.py.
"""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest

from bothost.agent import prompt_command
from bothost.agent.untrusted import UNTRUSTED_OPEN
from bothost.models import Address, IncomingMessage
from tests.helpers import bothost_process, make_host

SURFACE = str(Path(__file__).resolve().parents[1] / "mcp" / "servers" / "surface_server.py")


def server(**env):
    return {"command": sys.executable, "args": [SURFACE], "env": env}


def message(text):
    return IncomingMessage(address=Address("test", "c1"), text=text, user="u1")


@pytest.fixture
async def host(home, fake_llm):
    llm = fake_llm.openai_config()
    servers = {"s": server(), "bare": server(CAPABILITIES="tools"), "weather": {"enabled": False}}
    host = make_host(home, {"llm": llm, "mcp": {"servers": servers}})
    await host.start(serve_http=False, tick=False)  # without HTTP it waits for the servers
    yield host
    await host.stop()


@pytest.mark.parametrize(
    "text, parsed",
    [
        ("hello", None),
        ("prompt me later", None),
        ("/prompt", ("", [])),
        ("  /Prompts ", ("", [])),
        ("/prompt s", ("s", [])),
        ('/prompt s/greet name="Ana Lu" style=loud', ("s/greet", ["name=Ana Lu", "style=loud"])),
    ],
)
def test_parse(text, parsed):
    command = prompt_command.parse(text)
    assert (command and (command.target, command.words)) == parsed


async def test_lists_the_prompts_of_every_server_that_has_some(host, fake_llm):
    reply = await host.handle_message(message("/prompt"))
    assert reply.text.splitlines() == [
        "Prompts (run one with /prompt SERVER/PROMPT name=value …):",
        "s/greet name [style] — Greet someone",
        "s/plain — No arguments",
    ]
    assert fake_llm.requests == []  # no turn, no model


async def test_a_prompt_becomes_the_persons_turn_marked_untrusted(host, fake_llm):
    fake_llm.script = [{"text": "Hello, Ana!"}]
    reply = await host.handle_message(message('/prompt s/greet name="Ana Lu"'))
    assert reply.text == "Hello, Ana!"
    sent = fake_llm.requests[-1]["messages"][-1]
    assert sent["role"] == "user"
    assert "ran the prompt s/greet (name=Ana Lu)" in sent["content"]
    wrapped = sent["content"].split(UNTRUSTED_OPEN.format(source="prompt s/greet"), 1)[1]
    assert wrapped.startswith(
        "\n[user]\nSay hello to Ana Lu, plainly.\n\n[assistant]\nWhich greeting?\n\n"
        "[user]\n[resource note://today]\nBuy milk.\n</untrusted-content>"
    )


MISTAKES = [
    ("/prompt s/greet", "s/greet needs name (usage: /prompt s/greet name=… [style=…])"),
    ("/prompt s/greet name=a mood=b", "s/greet takes no argument mood (it takes name, style)"),
    ("/prompt s/nope", "s has no prompt 'nope'; its prompts: greet, plain"),
    ("/prompt zz/x", "no MCP server named 'zz' has prompts; servers with prompts: s"),
    ("/prompt bare", "no MCP server named 'bare' has prompts; servers with prompts: s"),
    ("/prompt s/greet name", "arguments are name=value, got 'name'"),
    ('/prompt s/greet name="open', "No closing quotation"),
]


async def test_mistakes_get_a_clear_answer_and_no_turn(host, fake_llm):
    for text, expected in MISTAKES:
        reply = await host.handle_message(message(text))
        assert expected in reply.text, text
    assert fake_llm.requests == []


async def test_the_terminal_routes_it(home, tmp_path, fake_llm):
    config = tmp_path / "c.yaml"
    config.write_text(
        textwrap.dedent(f"""
        mcp: {{servers: {{weather: {{enabled: false}},
                         s: {{command: '{sys.executable}', args: ['{SURFACE}']}}}}}}
        """)
    )
    process = await bothost_process(home, config, "chat", "-m", "/prompt s")
    async with asyncio.timeout(60):
        out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    assert "s/greet name [style] — Greet someone" in out.decode()


def test_a_prompt_turn_counts_as_untrusted_for_the_interlock():
    from bothost.agent.interlock import context_flags

    prompt_turn = {"role": "user", "content": "…", "untrusted": True}
    private_result = {"role": "tool", "content": "…", "private": True}
    assert context_flags([prompt_turn, private_result]) == (True, True)
    assert context_flags([{"role": "user", "content": "hi"}, private_result]) == (True, False)


async def test_a_server_still_starting_is_named_as_starting(home, fake_llm):
    # Found from outside: `chat -m '/prompt time'` with mcp-server-time starting for 6 s
    # on a loaded machine (past the 5 s grace) answered "no MCP server named 'time' has
    # prompts; servers with prompts: none", and `/prompt` "No running MCP server offers
    # prompts", as if it had none.
    hang = {"command": sys.executable, "args": ["-c", "import time; time.sleep(3600)"]}
    servers = {"s": server(), "slow": hang, "weather": {"enabled": False}}
    host = make_host(home, {"llm": fake_llm.openai_config(), "mcp": {"servers": servers}})
    await host.start(serve_http=False, tick=False)
    try:
        named = (await host.handle_message(message("/prompt slow"))).text
        assert named.startswith("slow is still starting"), named
        listed = (await host.handle_message(message("/prompt"))).text
        assert listed.startswith("Prompts (") and "still starting: slow" in listed, listed
    finally:
        await host.stop()
    assert fake_llm.requests == []


async def test_the_listing_and_the_mistakes_name_the_same_servers(home, fake_llm):
    # Found from outside: with mcp-server-time (prompts declared, none listed) `/prompt`
    # said "No running MCP server offers prompts" and `/prompt files` "servers with
    # prompts: time".
    servers = {"time": server(NO_PROMPTS="1"), "weather": {"enabled": False}}
    host = make_host(home, {"llm": fake_llm.openai_config(), "mcp": {"servers": servers}})
    await host.start(serve_http=False, tick=False)
    try:
        said = [(await host.handle_message(message(t))).text for t in ("/prompt", "/prompt files")]
        named = (await host.handle_message(message("/prompt time"))).text
    finally:
        await host.stop()
    assert said == [
        "No running MCP server offers prompts.",
        "no MCP server named 'files' has prompts; servers with prompts: none",
    ]
    assert named == "time offers no prompts; servers with prompts: none"


async def test_listings_and_mistakes_are_bounded_and_say_what_was_cut(home, fake_llm):
    # Found from outside: one prompt with 200,000 arguments made `/prompt` answer 8.6 M
    # characters (RSS 186 MB, /healthz 1.5 s).
    hostile = server(WIDE_ARGS="200000", MANY_PROMPTS="300")
    servers = {"s": hostile, "weather": {"enabled": False}}
    host = make_host(home, {"llm": fake_llm.openai_config(), "mcp": {"servers": servers}})
    await host.start(serve_http=False, tick=False)
    try:
        listed = (await host.handle_message(message("/prompt"))).text
        one = (await host.handle_message(message("/prompt s"))).text
        missing = (await host.handle_message(message("/prompt s/wide"))).text
        unknown = (await host.handle_message(message("/prompt s/nope"))).text
        extra = (await host.handle_message(message("/prompt s/wide zz=1"))).text
    finally:
        await host.stop()
    for reply in (listed, one, missing, unknown, extra):
        assert len(reply) <= prompt_command.MAX_REPLY, len(reply)
    assert listed.startswith("Prompts (")
    assert "s/greet name [style] — Greet someone" in listed  # what fits is shown as before
    wide = next(line for line in listed.splitlines() if line.startswith("s/wide "))
    assert wide.startswith("s/wide a0 a1 a2") and "199,988 more arguments" in wide
    assert "w" * (prompt_command.MAX_DESCRIPTION + 1) not in wide
    assert "more prompts not shown" in listed  # 303 prompts: the rest named as a count
    assert "n" * (prompt_command.MAX_NAME + 1) not in listed
    assert missing.startswith("s/wide needs a0, a1") and "more" in missing
    assert unknown.startswith("s has no prompt 'nope'; its prompts: ") and "more" in unknown
    assert extra.startswith("s/wide takes no argument zz (it takes a0, a1") and "more" in extra
    assert fake_llm.requests == []
