"""What a person asked to approve a tool call is shown of its arguments: all that matters.

The arguments come from a model that may be steered by text a third party wrote (a web
page, an email), so the question must not let them hide anything: invisible and reordering
characters (bidi overrides and isolates, zero-width marks, C1 controls, line separators:
all of :mod:`bothost.hidden`) are written as ``\\uXXXX``; a run of one repeated whitespace
character is written as its count (``[2000 spaces]``), so padding cannot push the rest out
of sight; and an argument text still over the limit shows its head and its tail with the
count of what is between, because what runs is often at the end.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bothost import hidden

LIMIT = 600  # characters of arguments a question shows; a person reads this, not a program
# every hidden character (bothost.hidden: format, control, line/paragraph separators),
# written as JSON writes an escape; JSON itself has already escaped C0
HIDDEN = hidden.table(style="json")
RUN = re.compile(r"([^\S\n])\1{7,}")  # eight or more of one whitespace character


def shown_arguments(arguments: Any) -> str:
    """``arguments`` as JSON a person can read whole (see the module)."""
    text = json.dumps(arguments, ensure_ascii=False)
    text = text.translate(HIDDEN)
    text = RUN.sub(_run, text)
    if len(text) <= LIMIT:
        return text
    half = LIMIT // 2
    return f"{text[:half]} … [{len(text) - 2 * half} characters not shown] … {text[-half:]}"


def _run(match: re.Match[str]) -> str:
    char, count = match.group(1), len(match.group(0))
    return f"[{count} spaces]" if char == " " else f"[{count} × \\u{ord(char):04x}]"
