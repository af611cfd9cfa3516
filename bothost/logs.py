"""Logging for a running host: stderr plus ``logs/bothost.log``, secrets redacted.

Every configured secret value (API keys, tokens, signing secrets, header and env values of
MCP servers) is replaced by ``***`` in every record before any handler sees it, so a library
that logs a request or an exception message cannot leak one.
"""

from __future__ import annotations

import dataclasses
import logging
import logging.handlers
from pathlib import Path
from typing import Any

from bothost.config import MASKED_MAPPINGS, SECRET_KEYS, Config

MAX_LOG_BYTES = 5 * 1024 * 1024
MIN_SECRET_LENGTH = 6  # shorter values would redact ordinary words


class SecretFilter(logging.Filter):
    def __init__(self, secrets: set[str]) -> None:
        super().__init__()
        self.secrets = sorted((s for s in secrets if len(s) >= MIN_SECRET_LENGTH),
                              key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        redacted = message
        for secret in self.secrets:
            redacted = redacted.replace(secret, "***")
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True


def secret_values(config: Config) -> set[str]:
    found: set[str] = set()

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if key in MASKED_MAPPINGS and isinstance(v, str):
                    found.add(v)
                walk(v, str(k))
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and key in SECRET_KEYS:
            found.add(value)

    walk(dataclasses.asdict(config))
    return {s for s in found if s and "${env:" not in s}


def setup(config: Config, home: Path, verbose: int = 0) -> None:
    root = logging.getLogger()
    level = logging.DEBUG if verbose > 1 else logging.INFO if verbose else \
        getattr(logging, config.log_level.upper(), logging.INFO)
    root.setLevel(level)
    log_file = Path(home) / "logs" / "bothost.log"
    log_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(log_file, maxBytes=MAX_LOG_BYTES,
                                                   backupCount=1, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    redact = SecretFilter(secret_values(config))
    for h in root.handlers:
        h.addFilter(redact)
