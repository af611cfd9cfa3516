"""Whether two rule patterns can match one value: for the note a new deny gets about an
allow above it that still decides some of its calls (:func:`bothost.rules.match.allows_before`).

Globs (``*``, ``?``, ``[set]``, ``[!set]``, as :func:`fnmatch.fnmatchcase` reads them) are
regular, so whether two meet is decided exactly: both are walked at once, one character
both accept at a time, until both can end together. A ``re:`` pattern is decided where the
other side is a literal (it is tried against it) or where both have literal starts that
differ (``ls …`` and ``rm …``); otherwise the two are taken to meet. The answer leans to
"may meet" whenever it cannot tell: a note too many costs a glance, a missed one hides an
allow that still decides calls the new deny was written to refuse.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

REGEX = "re:"  # an argument pattern starting with this is a regular expression
GLOB_SPECIAL = "*?["
REGEX_SPECIAL = set(".^$*+?{}[]\\|()")
QUANTIFIERS = set("*+?{")  # a character these follow may be absent (or repeated)
# pairs of places in two globs walked before answering "may meet" unwalked: real rules'
# globs take a few hundred; two 1,000-character ones full of `*` would take seconds
MAX_STATES = 5_000


@dataclass(frozen=True)
class Chars:
    """A set of characters: the ``ranges`` (inclusive code points), or all others."""

    ranges: tuple[tuple[int, int], ...]
    negated: bool = False

    def __contains__(self, point: int) -> bool:
        inside = any(lo <= point <= hi for lo, hi in self.ranges)
        return inside != self.negated

    def meets(self, other: Chars) -> bool:
        """Whether some character is in both."""
        if self.negated and other.negated:
            return True  # two finite sets leave out almost all of Unicode
        if self.negated:
            return other.meets(self)
        if not other.negated:
            return any(max(a, c) <= min(b, d) for a, b in self.ranges for c, d in other.ranges)
        for lo, hi in self.ranges:  # some point of ours outside all of the other's ranges
            # the first point of a range, or the first after one of the other's ranges
            candidates = [lo, *(end + 1 for _, end in other.ranges if lo <= end + 1 <= hi)]
            if any(point in other for point in candidates):
                return True
        return False


ANY = Chars((), negated=True)
STAR = None  # a token that matches any run of characters


def char_set(pattern: str, start: int) -> tuple[Chars, int] | None:
    """The ``[…]`` set at ``start`` and the index after it; None when it never closes
    (fnmatch then reads the ``[`` as itself)."""
    i = start + 1
    negated = i < len(pattern) and pattern[i] == "!"
    i += negated
    first = i
    while i < len(pattern) and (pattern[i] != "]" or i == first):
        i += 1
    if i >= len(pattern):
        return None
    body, ranges = pattern[first:i], []
    j = 0
    while j < len(body):
        if j + 2 < len(body) and body[j + 1] == "-":
            lo, hi = ord(body[j]), ord(body[j + 2])
            if lo <= hi:  # fnmatch drops a range written backwards
                ranges.append((lo, hi))
            j += 3
        else:
            ranges.append((ord(body[j]), ord(body[j])))
            j += 1
    return Chars(tuple(ranges), negated), i + 1


@functools.lru_cache(maxsize=512)  # rules are few; a note compares each pair once
def tokens(pattern: str) -> tuple[Chars | None, ...]:
    """A glob as one token per character it matches, ``STAR`` for ``*``."""
    out: list[Chars | None] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            if not out or out[-1] is not STAR:
                out.append(STAR)
            i += 1
        elif c == "?":
            out.append(ANY)
            i += 1
        elif c == "[" and (found := char_set(pattern, i)) is not None:
            out.append(found[0])
            i = found[1]
        else:
            out.append(Chars(((ord(c), ord(c)),)))
            i += 1
    return tuple(out)


def globs_meet(a: str, b: str) -> bool:
    """Whether some value matches both globs (exactly, or True past :data:`MAX_STATES`)."""
    left, right = tokens(a), tokens(b)
    seen: set[tuple[int, int]] = set()
    todo = [(0, 0)]
    while todo:
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        if len(seen) >= MAX_STATES:
            return True  # leaning to a note, as everywhere here
        seen.add((i, j))
        if i == len(left) and j == len(right):
            return True
        if i < len(left) and left[i] is STAR:
            todo.append((i + 1, j))  # the star matches nothing more
        if j < len(right) and right[j] is STAR:
            todo.append((i, j + 1))
        if i < len(left) and j < len(right):
            one, two = left[i] or ANY, right[j] or ANY
            if one.meets(two):  # one character both accept: a star stays where it is
                todo.append((i + (left[i] is not STAR), j + (right[j] is not STAR)))
    return False


def glob_literal(pattern: str) -> str | None:
    return None if any(c in pattern for c in GLOB_SPECIAL) else pattern


def regex_literal(body: str) -> str | None:
    return None if any(c in REGEX_SPECIAL for c in body) else body


def regex_start(body: str) -> str:
    """The literal characters every value a regular expression matches starts with (a
    prefix of them; "" when it cannot tell, as with an alternation anywhere)."""
    if "|" in body:
        return ""
    i = 0
    while i < len(body) and body[i] not in REGEX_SPECIAL:
        i += 1
    if i < len(body) and body[i] in QUANTIFIERS:
        i -= 1  # `ab?`: the b may be absent
    return body[: max(i, 0)]


def start_of(pattern: str) -> str:
    if pattern.startswith(REGEX):
        return regex_start(pattern[len(REGEX) :])
    cut = [i for i in (pattern.find(c) for c in GLOB_SPECIAL) if i >= 0]
    return pattern[: min(cut)] if cut else pattern


def literal_of(pattern: str) -> str | None:
    if pattern.startswith(REGEX):
        return regex_literal(pattern[len(REGEX) :])
    return glob_literal(pattern)


def patterns_meet(a: str, b: str, matches: Callable[[str, str], bool]) -> bool:
    """Whether some value may match both argument patterns (a glob or ``re:…`` each);
    ``matches(pattern, value)`` is how a rule matches one (bothost.rules.match)."""
    if not a.startswith(REGEX) and not b.startswith(REGEX):
        return globs_meet(a, b)
    for one, two in ((a, b), (b, a)):
        value = literal_of(one)
        if value is not None:
            return matches(two, value)
    first, second = start_of(a), start_of(b)
    return first.startswith(second) or second.startswith(first)
