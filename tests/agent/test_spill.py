"""A spill that cannot be written falls back to a plain cut; the turn goes on."""

import logging

from bothost.agent import spill
from bothost.models import Address, IncomingMessage
from tests.fakes.llm import last_tool_result


def message(text):
    return IncomingMessage(address=Address("test", "c1"), text=text, user="u1", is_admin=True)


def blocked_spill_dir(home):
    """A spill dir that cannot be created, even by root: its parent is a regular file."""
    blocker = home / "not-a-dir"
    blocker.write_text("")
    return blocker / "spill"


def test_cut_falls_back_when_the_spill_dir_cannot_be_made(home, caplog):
    text = "".join(f"{i:05d}" for i in range(1000))
    with caplog.at_level(logging.WARNING, logger="bothost.agent.spill"):
        shown = spill.cut(text, 100, blocked_spill_dir(home))
        spill.cut(text, 100, blocked_spill_dir(home))
    assert shown.startswith(text[:100]) and text[100:200] not in shown
    assert "4900 of 5000 characters not shown" in shown
    assert "could not be saved" in shown and "read_output" not in shown
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "spill" in warnings[0].getMessage()


def test_cut_falls_back_when_spill_is_a_file(home):
    (home / "spill").write_text("in the way")
    shown = spill.cut("a" * 50, 10, home / "spill")
    assert shown.startswith("a" * 10) and "could not be saved" in shown
    assert (home / "spill").read_text() == "in the way"


async def test_turn_goes_on_when_the_spill_cannot_be_written(openai_host, fake_llm, home):
    openai_host.config.agent.output_budget = 100
    (home / "spill").rmdir() if (home / "spill").is_dir() else None
    (home / "spill").write_text("")  # spill/ is a file: nothing can be saved under it

    def dump() -> str:
        """A lot of output."""
        return "z" * 5000

    openai_host.registry.register(dump)
    fake_llm.script = [
        {"tool_calls": [{"name": "dump", "arguments": {}}]},
        lambda body: {"text": "saw: " + last_tool_result(body)[-80:]},
    ]
    reply = (await openai_host.handle_message(message("dump"))).text
    assert reply.startswith("saw: ") and "could not be saved" in reply
