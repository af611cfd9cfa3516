"""Each MCP server's own log file: ``<home>/logs/mcp/<name>.log``, rotated at 5 MB.

The server's stderr (line by line), its ``notifications/message`` entries (at the level
config ``log_level`` asks for: :func:`set_level`) and the host's
lifecycle lines about it (started, exited, restarted) all go to one file, so ``bothost mcp
logs NAME`` shows the whole story of a server. One logger per server, not propagated to the
host's log, so a chatty server cannot flood it. The file gets the host log's redaction
filter (:mod:`bothost.redact`): a server that prints its own token writes ``***``.

What a server writes is escaped on the way into the file as the command line escapes what
it prints (:func:`bothost.logs.terminal.shown`: control characters but newline and tab, and
bidi controls, as ``\\x1b``-style text), so an operator who ``tail``s or ``less``es the
file gets no OSC 52 clipboard write or cleared screen; the file stays plain UTF-8 text.
"""

from __future__ import annotations

import logging
import os
from io import TextIOWrapper
from pathlib import Path
from typing import Any, cast

from bothost import redact
from bothost.logs.file import LogFileHandler
from bothost.logs.terminal import ShownFormatter
from bothost.mcp import revision
from bothost.mcp.jsonrpc import McpError

MAX_BYTES = 5 * 1024 * 1024  # DESIGN: rotate at 5 MB
BACKUPS = 1  # one backup: <name>.log.1
LOG_FORMAT = "%(asctime)s %(levelname)s %(message)s"
SET_LEVEL_TIMEOUT = 10.0  # a server's answer to logging/setLevel; a start waits for it

host_logger = logging.getLogger(__name__)

# MCP logging levels (RFC 5424 names) onto Python's.
MCP_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


class PrivateRotatingFileHandler(LogFileHandler):
    """Creates its files 0600: a server's stderr may carry the user's private data; a file
    it cannot write is one line on stderr (:mod:`bothost.logs.file`)."""

    def _open(self) -> TextIOWrapper:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        # a log handler's mode is text ("a"), so open() gives the TextIOWrapper it declares
        return cast(TextIOWrapper, open(fd, self.mode, encoding=self.encoding, errors=self.errors))


def log_path(home: Path, name: str) -> Path:
    return Path(home) / "logs" / "mcp" / f"{name}.log"


def server_logger(home: Path | None, name: str) -> logging.Logger:
    """The logger for server `name`; writes to its file when `home` is given."""
    logger = logging.getLogger(f"bothost.mcp.server.{name}")
    logger.setLevel(logging.DEBUG)
    if home is None:
        return logger
    path = log_path(home, name)
    for handler in logger.handlers:
        if getattr(handler, "baseFilename", None) == str(path):
            return logger
    for handler in list(logger.handlers):  # a previous home (tests) — drop it
        logger.removeHandler(handler)
        handler.close()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:  # a read-only home (`mcp list` reads one): its records go to the host's
        logger.propagate = True
        return logger
    handler = PrivateRotatingFileHandler(
        path,
        maxBytes=MAX_BYTES,
        backupCount=BACKUPS,
        encoding="utf-8",
        delay=True,
        errors="backslashreplace",  # what a server sends may hold lone surrogates
    )
    handler.setFormatter(ShownFormatter(LOG_FORMAT))
    logger.addHandler(redact.protect(handler))
    logger.propagate = False
    return logger


def close_server_logger(name: str) -> None:
    logger = logging.getLogger(f"bothost.mcp.server.{name}")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()


def log_message(logger: logging.Logger, params: dict) -> None:
    """Write one ``notifications/message`` entry."""
    level = MCP_LEVELS.get(str(params.get("level", "info")).lower(), logging.INFO)
    origin = params.get("logger")
    data = params.get("data")
    logger.log(level, "[message%s] %s", f" {origin}" if origin else "", data)


async def set_level(session: Any, level: str | None, server: str, log: logging.Logger) -> None:
    """Send ``logging/setLevel`` (config ``log_level``) when the server declares ``logging``
    (at 2026-07-28: have every request carry it as ``logLevel`` in its ``_meta``, to any
    server); its
    ``notifications/message`` then come at that level and above, into its log file.
    What cannot be done is a warning: the level is a nicety, never a failed start."""
    if not level:
        return
    key = f"mcp.servers.{server}.log_level"
    if revision.stateless(session.protocol_version):
        # no logging/setLevel there: the level rides in each request's _meta (logLevel),
        # asked of any server, since that revision deprecates the capability (SEP-2577)
        session.log_level = level
        log.info("asking for log messages at %s and above with each request", level)
        return
    if "logging" not in session.capabilities:
        why = "does not declare the logging capability"
    else:
        try:
            await session.request("logging/setLevel", {"level": level}, timeout=SET_LEVEL_TIMEOUT)
        except McpError as exc:
            why = f"refused logging/setLevel: {exc.message}"
        else:
            log.info("asked for log messages at %s and above", level)
            return
    log.warning("%s; %s is not used", why, key)
    host_logger.warning("MCP server %s %s; %s is not used", server, why, key)
