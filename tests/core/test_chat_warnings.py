"""What a person chatting in the terminal sees of the other parts' warnings and errors.

Found from outside: `bothost chat` kept only the MCP runner's records off the terminal; a
store, agent, LLM or plugin warning still printed raw in the middle of an answer (time,
level, logger, and for an exception its whole traceback), once per occurrence. Now each
problem is one line, `bothost: PART: what happened; details in LOG`, once per chat, the
same for `-m` and the `you>` prompt, and the full records are in logs/bothost.log.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap

import pytest
import yaml

from bothost.host.logs import ChatFormatter, ChatNotices
from tests.helpers import COMMAND_SECONDS, run_bothost

# a plugin whose start-up hook logs as the store, the agent and a plugin would: a warning
# of two lines twice (the second with other values), and an error with a traceback
NOISY = textwrap.dedent("""
    import logging

    from bothost.hookspecs import hookimpl


    @hookimpl
    def startup(host):
        for attempt in (1, 2):
            logging.getLogger("bothost.store.writer").warning(
                "the store is busy (attempt %d)\\nretrying", attempt
            )
        try:
            raise OSError("disk full")
        except OSError:
            logging.getLogger("bothost.plugins.noisy").exception("could not save the cache")
        logging.getLogger("bothost.agent.turn").info("an info line the terminal never shows")
""")


@pytest.fixture
def config(tmp_path) -> str:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "noisy.py").write_text(NOISY)
    path = tmp_path / "c.yaml"
    data = {
        "plugins": {"dirs": [str(plugins)]},
        "mcp": {"servers": {"weather": {"enabled": False}}},
    }
    path.write_text(yaml.safe_dump(data))
    return str(path)


def one_line_per_problem(stderr: str, home) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    log = "logs/bothost.log"
    assert len(lines) == 2, stderr
    assert lines[0].startswith("bothost: store: the store is busy (attempt 1) retrying;"), stderr
    assert lines[1].startswith(
        "bothost: plugins.noisy: could not save the cache (OSError: disk full);"
    ), stderr
    assert all(line.endswith(log) and "details in" in line for line in lines), stderr
    assert "Traceback" not in stderr and "WARNING" not in stderr and "info line" not in stderr
    text = (home / "logs" / "bothost.log").read_text()
    assert "WARNING bothost.store.writer: the store is busy (attempt 2)" in text
    assert "ERROR bothost.plugins.noisy: could not save the cache" in text
    assert "Traceback" in text and "OSError: disk full" in text


def test_chat_message_shows_each_problem_as_one_line(config, home):
    chat = run_bothost("chat", "-m", "tools", config=config, timeout=COMMAND_SECONDS)
    assert chat.returncode == 0, chat.stderr
    assert "Tools:" in chat.stdout
    one_line_per_problem(chat.stderr, home)


def test_the_chat_prompt_shows_each_problem_as_one_line(config, home):
    chat = subprocess.run(
        [sys.executable, "-m", "bothost", "--config", config, "chat"],
        input="tools\n",
        capture_output=True,
        text=True,
        timeout=COMMAND_SECONDS,
        env=os.environ,
    )
    assert chat.returncode == 0, chat.stderr
    assert "Tools:" in chat.stdout
    one_line_per_problem(chat.stderr, home)


def test_verbose_chat_shows_the_records_raw(config, home):
    chat = run_bothost("-v", "chat", "-m", "tools", config=config, timeout=COMMAND_SECONDS)
    assert chat.returncode == 0, chat.stderr
    assert "WARNING bothost.store.writer: the store is busy (attempt 2)" in chat.stderr
    assert "Traceback" in chat.stderr


def record(name: str, msg: str, *args: object, level: int = logging.WARNING) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, msg, args, None)


def test_a_problem_line_is_short_and_names_the_part():
    notices = ChatNotices()
    shown = ChatFormatter("~/.bothost/logs/bothost.log")
    long = record("aiohttp.client", "x" * 1000)
    assert notices.filter(long)
    line = shown.format(long)
    assert line.startswith("bothost: aiohttp: xxx") and "\n" not in line and len(line) < 400
    assert line.endswith("; details in ~/.bothost/logs/bothost.log")
    assert not notices.filter(record("aiohttp.client", "x" * 1000))  # the same problem again
    assert not notices.filter(record("bothost.mcp.runner", "restarting in %d s", 1))
    assert notices.filter(record("bothost.llm.openai", "the model answered %d", 429))
