"""Cutting tool output to the output budget, and reading the rest back from ``spill/``."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

REF_PATTERN = re.compile(r"^[a-f0-9]{12}$")
READ_CHUNK = 16_000  # characters read_output returns per call


def cut(text: str, budget: int, spill_dir: Path) -> str:
    if len(text) <= budget:
        return text
    ref = uuid.uuid4().hex[:12]
    spill_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = spill_dir / f"{ref}.txt"
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    return (
        f"{text[:budget]}\n[output cut: {len(text) - budget} of {len(text)} characters not "
        f"shown; call read_output(ref=\"{ref}\", offset={budget}) for the rest]"
    )


def read(spill_dir: Path, ref: str, offset: int = 0, limit: int = READ_CHUNK) -> str:
    if not REF_PATTERN.match(ref):
        raise ValueError(f"no such output: {ref!r}")
    path = spill_dir / f"{ref}.txt"
    if not path.exists():
        raise ValueError(f"no such output: {ref!r}")
    text = path.read_text(encoding="utf-8")
    chunk = text[max(0, offset): max(0, offset) + limit]
    end = max(0, offset) + len(chunk)
    tail = (f"\n[{len(text) - end} more characters; read_output(ref=\"{ref}\", offset={end})]"
            if end < len(text) else "\n[end of output]")
    return chunk + tail
