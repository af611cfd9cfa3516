"""Cutting tool output to the output budget, and reading the rest back from ``spill/``.

The budget is shared by one round's results and sized from the context window
(:func:`allot`): the results of a round take at most half of what the context has free,
the small ones what they need and the large ones an even split of the rest, so five large
results in parallel fit as surely as one. ``agent.output_budget``, when set, caps each.
The rest is saved as ``spill/<ref>.txt`` and the cut marker tells the model how to read it.
Saving is a convenience, never a condition: when the file cannot be written (disk full, an
unwritable or missing home) the output is still cut, the marker says the rest is lost, and
the turn goes on. Untrusted output stays untrusted across the cut: the part shown and every
part read back are wrapped (:mod:`bothost.agent.untrusted`), with the marker outside.
"""

from __future__ import annotations

import logging
import re
import uuid
from pathlib import Path

from bothost.agent.untrusted import wrap_untrusted
from bothost.llm.base import CHARS_PER_TOKEN

logger = logging.getLogger(__name__)

REF_PATTERN = re.compile(r"^[a-f0-9]{12}$")
READ_CHUNK = 16_000  # characters read_output returns per call, at most
# what a read-back adds around its chunk (wrapper, tail marker): kept out of the chunk so the
# read-back fits the output budget and is not cut (and its wrapper broken) a second time
READ_ROOM = 300
SOURCE_SUFFIX = ".source"  # beside <ref>.txt: the tool an untrusted output came from

# One round's results take at most this share of the tokens the context has free, so the
# model's next rounds of the same turn still have room to read and answer.
ROUND_SHARE = 0.5
# Characters a result may always show, however full the context: less says nothing, and a
# full context is compacted before the next round.
MIN_RESULT = 1000
# What a result adds around its text (cut marker, untrusted wrapper, the message around it).
RESULT_ROOM = 300

_warned: set[Path] = set()  # spill dirs already reported unwritable (one log line each)


def cut(text: str, budget: int, spill_dir: Path, source: str | None = None) -> str:
    """``text`` within ``budget``; wrapped as untrusted content of ``source`` when given."""

    def shown(part: str) -> str:
        return wrap_untrusted(part, source) if source is not None else part

    if len(text) <= budget:
        return shown(text)
    head, missing = text[:budget], f"{len(text) - budget} of {len(text)} characters not shown"
    ref = uuid.uuid4().hex[:12]
    try:
        save(spill_dir, ref, text, source)
    except OSError as exc:
        if spill_dir not in _warned:
            _warned.add(spill_dir)
            logger.warning(
                "cannot save cut tool output in %s (%s); cutting without a copy",
                spill_dir,
                exc.strerror or exc,
            )
        return (
            f"{shown(head)}\n[output cut: {missing}; the rest could not be saved, "
            "so it cannot be read back]"
        )
    return (
        f'{shown(head)}\n[output cut: {missing}; call read_output(ref="{ref}", '
        f"offset={budget}) for the rest]"
    )


def allot(free_tokens: int, sizes: list[int], cap: int | None = None) -> list[int]:
    """Each result's budget in characters, for results of ``sizes`` characters that share a
    round and a context with ``free_tokens`` free; ``cap`` bounds each (None: no bound)."""
    left = max(0, int(free_tokens * ROUND_SHARE) * CHARS_PER_TOKEN - RESULT_ROOM * len(sizes))
    budgets = [0] * len(sizes)
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    for done, i in enumerate(order):  # smallest first: what one leaves, the larger share
        fair = left // (len(sizes) - done)
        budget = max(min(sizes[i], fair), min(sizes[i], MIN_RESULT))
        if cap is not None:
            budget = min(budget, cap)
        budgets[i] = budget
        left = max(0, left - budget)
    return budgets


def save(spill_dir: Path, ref: str, text: str, source: str | None) -> None:
    path = spill_dir / f"{ref}.txt"
    try:
        spill_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(0o600)
        if source is not None:
            path.with_suffix(SOURCE_SUFFIX).write_text(source, encoding="utf-8")
    except OSError:
        for leftover in (path, path.with_suffix(SOURCE_SUFFIX)):
            try:
                leftover.unlink(missing_ok=True)  # a half-written copy would read as the rest
            except OSError:
                pass
        raise


def chunk_size(budget: int | None) -> int:
    """How much ``read_output`` returns per call for an output budget of ``budget``."""
    if budget is None:
        return READ_CHUNK
    return max(1, min(READ_CHUNK, max(budget - READ_ROOM, budget // 2)))


def read(spill_dir: Path, ref: str, offset: int = 0, limit: int = READ_CHUNK) -> str:
    if not REF_PATTERN.match(ref):
        raise ValueError(f"no such output: {ref!r}")
    path = spill_dir / f"{ref}.txt"
    if not path.exists():
        raise ValueError(f"no such output: {ref!r}")
    text = path.read_text(encoding="utf-8")
    chunk = text[max(0, offset) : max(0, offset) + limit]
    end = max(0, offset) + len(chunk)
    source_file = path.with_suffix(SOURCE_SUFFIX)
    if source_file.exists():
        chunk = wrap_untrusted(chunk, source_file.read_text(encoding="utf-8"))
    tail = (
        f'\n[{len(text) - end} more characters; read_output(ref="{ref}", offset={end})]'
        if end < len(text)
        else "\n[end of output]"
    )
    return chunk + tail
