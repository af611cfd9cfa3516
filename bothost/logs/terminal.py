"""What the command line writes to a person's terminal: text shown, never obeyed.

Much of what ``bothost`` prints was written by someone else: a tool's result, an MCP
server's error, a pushed event's summary, a model's reply quoting a web page. A terminal
obeys control sequences in it: OSC 52 writes the clipboard, OSC 0 the window title, CSI
clears the screen or moves the cursor, a carriage return or a bidi override hides what came
before it. So :func:`shown` writes every control character but newline and tab (C0, DEL and
the C1 range, which some terminals read as 8-bit CSI) and the bidi embeddings, overrides and
isolates as visible escapes (``\\x1b``, ``\\u202e``); the words around them stay. Which
characters are hidden is :mod:`bothost.hidden`'s one list; this is the terminal's choice
from it. It applies
to pipes too: output saved to a file is read in a terminal later. bothost itself writes no
styling, so nothing of ours is lost.

:func:`guarded_output` wraps ``sys.stdout`` and ``sys.stderr`` for the run of :func:`main`
(click's ``echo``, ``print`` and logging's stream handler all write through them), so no
command has to remember; JSON output keeps its own escaping (``\\u001b``), untouched.
:class:`ShownFormatter` does the same for the log files (the host's and each MCP server's).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from bothost import hidden

KEPT = {ord("\n"), ord("\t")}  # a terminal's own layout
# the hidden characters (bothost.hidden) that drive a terminal or reorder text; the other
# format characters (a joiner inside an emoji, a soft hyphen) render as text needs them
SHOWN = hidden.table((hidden.CONTROLS - KEPT) | hidden.REORDERING)


def shown(text: str) -> str:
    """``text`` with its control characters written as visible escapes (see the module)."""
    return text.replace("\r\n", "\n").translate(SHOWN)


class ShownStream:
    """A text stream that writes through :func:`shown`; everything else is the wrapped one."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(shown(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


# What starts each further line of a log record (a message of several lines, a traceback):
# a record's own line starts with its time, so text a peer sent with "\n2026-… ERROR bothost
# …" in it (a server's log message, an error it answered) cannot pass for a line we wrote.
CONTINUATION = "  | "


class ShownFormatter(logging.Formatter):
    """Each log record, traceback included, through :func:`shown`: for log files, which an
    operator reads with ``tail`` or ``less`` in a terminal. Every line of a record after its
    first starts with :data:`CONTINUATION`."""

    def format(self, record: logging.LogRecord) -> str:
        return shown(super().format(record)).replace("\n", "\n" + CONTINUATION)


@contextmanager
def guarded_output() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` as :class:`ShownStream` until the block ends."""
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, ShownStream):
        sys.stdout = ShownStream(sys.stdout)
    if not isinstance(sys.stderr, ShownStream):
        sys.stderr = ShownStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
