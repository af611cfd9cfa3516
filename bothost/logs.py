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
