"""Text from third parties (an MCP server's result, a pushed event's summary) printed on a
person's terminal: its control sequences are shown, never obeyed. An OSC 52 sequence writes
the clipboard, OSC 0 the window title, CSI 2J clears the screen and a carriage return or a
bidi override hides what came before it."""

import json
import os
import sys
import textwrap

from tests.core.test_terminal import Terminal

HOSTILE = "A\x1b[2J\x1b]52;c;ZWNobyBwd25lZA==\x07B\u202eevil\u202cC\rD\x9b31mE"

PLUGIN = textwrap.dedent('''
    from bothost.hookspecs import hookimpl

    def fetch_page() -> str:
        """Return what a web page said."""
        return HOSTILE


    @hookimpl
    def register_tools(register):
        register(fetch_page)
''').replace("HOSTILE", repr(HOSTILE))


def run(tmp_path, home, *args, expect="E"):
    plugins = tmp_path / "plugins"
    plugins.mkdir(exist_ok=True)
    (plugins / "pages.py").write_text(PLUGIN)
    config = tmp_path / "c.yaml"
    config.write_text(
        f"plugins: {{dirs: ['{plugins}']}}\nmcp: {{servers: {{weather: {{enabled: false}}}}}}\n"
    )
    env = {**os.environ, "BOTHOST_HOME": str(home)}
    # on a pseudo-terminal (tests/core/test_terminal.py), not with tests.helpers.run_bothost:
    # what the terminal shows is the point of the test
    term = Terminal([sys.executable, "-m", "bothost", "--config", str(config), *args], env)
    assert term.process.wait(timeout=60) == 0
    term.expect(expect)
    os.close(term.master)
    return term.seen


def assert_shown_not_obeyed(seen: bytes):
    assert b"\x1b" not in seen and b"\x07" not in seen and "\x9b".encode() not in seen
    assert "\u202e".encode() not in seen and b"C\rD" not in seen
    text = seen.decode()
    assert "ZWNobyBwd25lZA==" in text and "evil" in text  # the words are all there


def test_a_tool_result_with_escape_sequences_is_shown_not_obeyed(tmp_path, home):
    assert_shown_not_obeyed(run(tmp_path, home, "chat", "-m", "call fetch_page {}"))


def test_an_event_summary_with_escape_sequences_is_listed_safely(tmp_path, home):
    run(
        tmp_path,
        home,
        "events",
        "push",
        "pages",
        "event/x",
        json.dumps({"summary": HOSTILE}),
        expect="Queued",
    )
    assert_shown_not_obeyed(run(tmp_path, home, "events", "list"))
