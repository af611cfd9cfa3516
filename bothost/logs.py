"""Logging for a running host: stderr plus ``logs/bothost.log``, secrets redacted.

Every configured secret value (API keys, tokens, signing secrets, header and env values of
MCP servers, ``${env:…}`` values, secret arguments) and anything secret-shaped is replaced by
``***`` in every record a handler writes, so a library that logs a request or an exception
message cannot leak one. The filter is :mod:`bothost.redact`'s, the same one every MCP
server's own log has.
"""

from __future__ import annotations

import logging
import logging.handlers
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bothost import redact
from bothost.config import Config
from bothost.terminal import ShownFormatter

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
    log_file = Path(home) / "logs" / "bothost.log"
    log_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(
        log_file,
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


# The loggers whose records a person chatting in the terminal does not see raw: the MCP
# runner's retries and tracebacks, which arrived at any moment (in the middle of an answer,
# at the `you>` prompt); each server a turn needed and could not have is one notice instead.
CHAT_QUIET = "bothost.mcp"


class ChatNotices(logging.Filter):
    """A terminal handler's filter for ``bothost chat``: a record from :data:`CHAT_QUIET`
    passes only if it carries a ``notice`` (``extra={"notice": …}``), and each notice once
    per chat; every other record passes as before."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        notice = getattr(record, "notice", None)
        if notice is None:
            return not record.name.startswith(CHAT_QUIET)
        if notice in self.shown:
            return False
        self.shown.add(notice)
        return True


class ChatFormatter(logging.Formatter):
    """A notice as one line, ``bothost: <notice>``; any other record as ``formatter`` would."""

    def __init__(self, formatter: logging.Formatter | None) -> None:
        super().__init__()
        self.formatter = formatter or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        notice = getattr(record, "notice", None)
        return f"bothost: {notice}" if notice else self.formatter.format(record)


@contextmanager
def chat_terminal(verbose: int = 0) -> Iterator[None]:
    """While a terminal chat runs, its stderr handlers show notices, not the MCP runner's
    records (see :class:`ChatNotices`); the log file keeps every record. ``bothost -v chat``
    asks for the log on stderr and gets it raw, unchanged."""
    handlers = [
        h
        for h in logging.getLogger().handlers
        if type(h) is logging.StreamHandler  # the command line's, not a file's or a test's
    ]
    if verbose:
        handlers = []
    notices = ChatNotices()
    saved = [(h, h.formatter) for h in handlers]
    for handler in handlers:
        handler.addFilter(notices)
        handler.setFormatter(ChatFormatter(handler.formatter))
    try:
        yield
    finally:
        for handler, formatter in saved:
            handler.removeFilter(notices)
            handler.setFormatter(formatter)
