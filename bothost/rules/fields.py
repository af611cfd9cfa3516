"""Field paths and patterns: the one matcher of triage rules, mutes and permission rules.

A rule names a value by a path into a mapping (``payload.from`` of an event, ``to`` of a
tool call's arguments: :func:`lookup`) and says what it must look like with a pattern over
the whole text (:func:`fits`): a glob (``fnmatch``), or, where the rule allows it, a regular
expression written ``re:PATTERN``. Each user keeps its own names and its own view of a value
as text: triage rules and mutes fold case and try a mail header's bare address and list
items (:func:`bothost.events.triage.candidates`), permission rules compare case as written
and allow ``re:`` (:func:`bothost.rules.match.matches`).

Regular expressions are compiled by the caller (permission rules' RE2, linear in the
value: :func:`bothost.rules.match.compiled`), so triage, which has none, imports no engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

from bothost.rules.overlap import REGEX

MISSING: Any = object()  # what :func:`lookup` gives for a path that names nothing


def lookup(root: Any, path: Sequence[str]) -> Any:
    """The value at ``path`` (keys, outermost first) inside ``root``, or :data:`MISSING`."""
    value = root
    for part in path:
        if not isinstance(value, Mapping) or part not in value:
            return MISSING
        value = value[part]
    return value


def fits(
    pattern: str,
    texts: Iterable[str],
    *,
    fold_case: bool = False,
    regex: Callable[[str], Any] | None = None,
) -> bool:
    """Whether ``pattern`` matches the whole of any of ``texts``: a glob, case folded with
    ``fold_case``; given ``regex`` (a compiler: permission rules' RE2), a ``re:PATTERN`` is
    a regular expression."""
    if regex is not None and pattern.startswith(REGEX):
        found = regex(pattern[len(REGEX) :])
        return any(found.fullmatch(text) is not None for text in texts)
    if fold_case:
        glob = pattern.lower()
        return any(fnmatchcase(text.lower(), glob) for text in texts)
    return any(fnmatchcase(text, pattern) for text in texts)
