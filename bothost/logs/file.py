"""The rotating log file handler of the host's log and every MCP server's log.

A log file can stop taking writes (a full disk under ``logs/``, a file system gone
read-only). Python's handlers then print ``--- Logging error ---`` and a traceback to
stderr for every record — 385 of them for 389 refused webhooks, burying the one line
that mattered. :class:`LogFileHandler` says it once instead, one line on stderr naming the
file and the error; the records are lost meanwhile, and when a write succeeds again it
says how many, and a later failure is said again.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys


class LogFileHandler(logging.handlers.RotatingFileHandler):
    """A :class:`~logging.handlers.RotatingFileHandler` that fails quietly: see the module."""

    failing = False  # a write failed and no write has succeeded since
    lost = 0  # records lost while failing

    def emit(self, record: logging.LogRecord) -> None:
        lost = self.lost
        super().emit(record)  # calls handleError when it cannot write
        if self.failing and self.lost == lost:  # this one was written: the spell is over
            self.failing, self.lost = False, 0
            self._say(f"the log {self.baseFilename} is written again; {lost:,} records were lost")

    def handleError(self, record: logging.LogRecord | None) -> None:  # noqa: N802 (logging's)
        self.lost += 1
        if self.failing:
            return
        self.failing = True
        error = sys.exc_info()[1]
        why = f"{type(error).__name__}: {error}" if error is not None else "unknown error"
        self._say(f"cannot write the log {self.baseFilename} ({why}); its records are lost")

    def flush(self) -> None:
        try:
            super().flush()
        except OSError:  # buffered lines that cannot go out (at close, at exit)
            self.handleError(None)

    def close(self) -> None:
        try:
            super().close()
        except OSError:  # closing flushes what is buffered: the same failure
            self.handleError(None)

    def _say(self, text: str) -> None:
        try:
            sys.stderr.write(f"bothost: {text}\n")
            sys.stderr.flush()
        except Exception:  # no stderr either (closed, a full pipe): nowhere left to say it
            pass
