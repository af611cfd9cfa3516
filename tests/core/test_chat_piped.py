"""`bothost chat` fed from a pipe or a file: stdout holds the replies and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers import COMMAND_SECONDS, run_bothost


def test_piped_chat_prints_only_the_replies(home):
    # found from outside: `echo hi | bothost chat` printed "you> " before each reply and once
    # more at the end, so a script reading stdout got the prompt mixed into the answers
    alone = run_bothost("chat", "-m", "help", timeout=COMMAND_SECONDS)
    assert alone.returncode == 0, alone.stderr
    chat = subprocess.run(
        [sys.executable, "-m", "bothost", "chat"],
        input="help\nhelp\n",
        capture_output=True,
        text=True,
        timeout=COMMAND_SECONDS,
        env=os.environ,
    )
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout == alone.stdout * 2
    assert "you>" not in chat.stderr


def test_at_a_terminal_whose_output_is_redirected_the_prompt_goes_to_stderr(monkeypatch):
    # `bothost chat > replies.txt`: the person typing still sees the prompt; the file does not
    import pty

    from bothost.host.serve import chat_prompt

    controller, end = pty.openpty()
    with open(end, encoding="utf-8") as stdin:
        monkeypatch.setattr("sys.stdin", stdin)
        assert chat_prompt() == ("you> ", True)
    os.close(controller)
