"""A log file that cannot be written (a full disk under ``logs/``) is one line on stderr,
naming the file and the error, never Python's ``--- Logging error ---`` traceback per
record (found from outside: 385 tracebacks for 389 refused webhooks).

``/dev/full`` stands in for the full disk: every write to it fails with ENOSPC.
"""

from __future__ import annotations

import logging
import os

import pytest

from bothost.host.logs import setup
from bothost.mcp.serverlog import close_server_logger, log_path, server_logger

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


@pytest.fixture
def root_handlers():
    """The root logger's handlers as they were, after the test (setup adds its own)."""
    root = logging.getLogger()
    before = {handler: list(handler.filters) for handler in root.handlers}
    level = root.level
    yield
    for handler in list(root.handlers):
        if handler in before:
            handler.filters[:] = before[handler]
        else:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)


def full(path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to("/dev/full")


def test_the_host_log_on_a_full_disk_is_one_line_on_stderr(home, root_handlers, capsys):
    from bothost.config import load

    log = home / "logs" / "bothost.log"
    full(log)
    config = home / "c.yaml"
    config.write_text("llm: {provider: offline}\n")
    setup(load(config, home), home)
    for i in range(50):
        logging.getLogger("test.full").warning("refused webhook %d", i)
    err = capsys.readouterr().err
    assert "Logging error" not in err and "Traceback" not in err
    said = [line for line in err.splitlines() if str(log) in line]
    assert len(said) == 1, err
    assert "No space left on device" in said[0]


def test_a_server_log_on_a_full_disk_is_one_line_on_stderr(home, capsys):
    full(log_path(home, "chatty"))
    log = server_logger(home, "chatty")
    try:
        for i in range(50):
            log.info("[stderr] line %d", i)
    finally:
        close_server_logger("chatty")
    err = capsys.readouterr().err
    assert "Logging error" not in err and "Traceback" not in err
    said = [line for line in err.splitlines() if "chatty.log" in line]
    assert len(said) == 1 and "No space left on device" in said[0], err
