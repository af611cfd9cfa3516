"""Logging for a running host: stderr plus ``logs/bothost.log``, secrets redacted.

Every configured secret value (API keys, tokens, signing secrets, header and env values of
MCP servers, ``${env:…}`` values, secret arguments) and anything secret-shaped is replaced by
``***`` in every record a handler writes, so a library that logs a request or an exception
message cannot leak one. The filter is :mod:`bothost.redact`'s, the same one every MCP
server's own log has.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bothost import redact
from bothost.config import Config
from bothost.logs.file import LogFileHandler
from bothost.logs.terminal import ShownFormatter

MAX_LOG_BYTES = 5 * 1024 * 1024

# The one redaction filter (bothost.redact) under its old name, for callers and tests.
SecretFilter = redact.SecretFilter


def secret_values(config: Config) -> set[str]:
    """Every secret value in ``config`` (see :func:`bothost.redact.config_secrets`)."""
    return redact.config_secrets(config)


def setup(config: Config, home: Path, verbose: int = 0) -> None:
    root = logging.getLogger()
    level = (
        logging.DEBUG
        if verbose > 1
        else logging.INFO
        if verbose
        else getattr(logging, config.log_level.upper(), logging.INFO)
    )
    root.setLevel(level)
    path = log_file(home)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    handler = LogFileHandler(  # a file it cannot write is one line on stderr, not a traceback
        path,
        maxBytes=MAX_LOG_BYTES,
        backupCount=1,
        encoding="utf-8",
        # a server or sender's lone surrogate
        # must not turn a log line into an error
        errors="backslashreplace",
    )
    # escaped as the command line escapes what it prints: the file is read in a terminal
    handler.setFormatter(ShownFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    redact.remember(secret_values(config))
    for h in root.handlers:
        redact.protect(h)


# The loggers whose records a person chatting in the terminal does not see at all: the MCP
# runner's retries and tracebacks, which arrived at any moment (in the middle of an answer,
# at the `you>` prompt); each server a turn needed and could not have is one notice instead.
CHAT_QUIET = "bothost.mcp"
# a problem's text on the terminal: two lines of a narrow terminal; the log file has it all
CHAT_LINE_CHARS = 200


class ChatNotices(logging.Filter):
    """A terminal handler's filter for ``bothost chat``: each problem once per chat.

    A record from :data:`CHAT_QUIET` passes only if it carries a ``notice``
    (``extra={"notice": …}``), each notice once; any other record passes the first time its
    logger logs that message (the same warning with other values is the same problem: the
    store retrying, a model answering 429 again).
    """

    def __init__(self) -> None:
        super().__init__()
        self.shown: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        notice = getattr(record, "notice", None)
        if notice is None:
            if record.name == CHAT_QUIET or record.name.startswith(CHAT_QUIET + "."):
                return False
            key = f"{record.name}\0{record.msg}"
        else:
            key = f"notice\0{notice}"
        if key in self.shown:
            return False
        self.shown.add(key)
        return True


class ChatFormatter(logging.Formatter):
    """A record as one line for the person chatting: a notice as ``bothost: <notice>``,
    anything else as ``bothost: PART: what happened (the exception); details in LOG``,
    where PART is the logger's part of bothost (``store``, ``agent``, ``plugins.gmail``) or
    the library's name, and LOG the log file that keeps the full record."""

    def __init__(self, log: str) -> None:
        super().__init__()
        self.log = log

    def format(self, record: logging.LogRecord) -> str:
        notice = getattr(record, "notice", None)
        if notice:
            return f"bothost: {notice}"
        return f"bothost: {part(record.name)}: {problem(record)}; details in {self.log}"


def part(name: str) -> str:
    """The part of the program a logger ``name`` belongs to, as the chat names it."""
    inner = name.removeprefix("bothost.")
    pieces = inner.split(".")
    if inner != name and pieces[0] == "plugins" and len(pieces) > 1:
        return ".".join(pieces[:2])
    return pieces[0]


def problem(record: logging.LogRecord) -> str:
    """The record's message, and its exception's last line, as one line of at most
    :data:`CHAT_LINE_CHARS` (the redaction filter has run: both are redacted)."""
    try:
        text = record.getMessage()
    except Exception:  # a broken format string: its template still says what went wrong
        text = str(record.msg)
    if record.exc_info and not record.exc_text:
        record.exc_text = redact.redact(logging.Formatter().formatException(record.exc_info))
    if record.exc_text:
        lines = [line for line in record.exc_text.splitlines() if line.strip()]
        if lines:
            text += f" ({lines[-1].strip()})"
    text = " ".join(text.split())
    if len(text) > CHAT_LINE_CHARS:
        text = text[: CHAT_LINE_CHARS - 1] + "…"
    return text


def log_file(home: Path) -> Path:
    """The log file of the host whose home is ``home``."""
    return Path(home) / "logs" / "bothost.log"


def shown_path(path: Path) -> str:
    """``path`` as a person reads it: under the home directory it starts with ``~``."""
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except (ValueError, RuntimeError):  # elsewhere, or no home directory known
        return str(path)


@contextmanager
def chat_terminal(verbose: int = 0, log: Path | None = None) -> Iterator[None]:
    """While a terminal chat runs, its stderr handlers show each problem as one line, once
    (see :class:`ChatNotices` and :class:`ChatFormatter`), never the MCP runner's records;
    the log file ``log`` keeps every record. ``bothost -v chat`` asks for the log on stderr
    and gets it raw, unchanged."""
    handlers = [
        h
        for h in logging.getLogger().handlers
        if type(h) is logging.StreamHandler  # the command line's, not a file's or a test's
    ]
    if verbose:
        handlers = []
    notices = ChatNotices()
    shown = ChatFormatter(shown_path(log) if log is not None else "the log file")
    saved = [(h, h.formatter) for h in handlers]
    for handler in handlers:
        handler.addFilter(notices)
        handler.setFormatter(shown)
    try:
        yield
    finally:
        for handler, formatter in saved:
            handler.removeFilter(notices)
            handler.setFormatter(formatter)
