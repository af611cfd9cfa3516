"""Characters a reader cannot see, or that change how the text around them reads: one list.

Hidden means the Unicode categories Cc (C0 controls, DEL, the C1 range), Cf (format:
bidi embeddings, overrides, isolates and marks, zero-width space and joiners, the soft
hyphen, the word joiner, the byte-order mark, tag characters) and Zl/Zp (line and paragraph
separators). :data:`RANGES` lists them for Unicode 14 (Python 3.11's database) as code point
ranges, so a table or a regex class is built without walking all of Unicode at start-up;
tests/core/test_hidden.py checks the list against :mod:`unicodedata` and fails, naming what
changed, on a Python whose Unicode differs.

Each use decides what it keeps, and says why:

* :mod:`bothost.logs.terminal` (what the command line prints, the log files) keeps newline and
  tab, and the format characters that neither drive a terminal nor reorder text (a
  zero-width joiner inside an emoji, a soft hyphen): it escapes :data:`CONTROLS` and
  :data:`REORDERING`;
* :mod:`bothost.agent.shown` (an approval question) keeps nothing hidden: a person must see
  all of what they approve;
* :mod:`bothost.agent.untrusted` lets any hidden character sit inside a look-alike of the
  wrapper's tag (:data:`CLASS`), where a reader would not see it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Container, Iterator

CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})
# every code point of CATEGORIES in Unicode 14.0, as inclusive ranges
RANGES = (
    (0x0000, 0x001F), (0x007F, 0x009F), (0x00AD, 0x00AD), (0x0600, 0x0605),
    (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891),
    (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x2028, 0x202E),
    (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x13438), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F),
)  # fmt: skip
# bidi embeddings and overrides (U+202A-U+202E) and isolates (U+2066-U+2069): they reorder
# what follows ("Trojan Source"); right-to-left text needs none of them to read right
REORDERING = frozenset([*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
CONTROLS = frozenset([*range(0x20), 0x7F, *range(0x80, 0xA0)])  # C0, DEL, C1 (category Cc)


def code_points() -> Iterator[int]:
    """Every hidden code point, in order."""
    for start, end in RANGES:
        yield from range(start, end + 1)


def is_hidden(char: str) -> bool:
    """Whether `char` is hidden, by the running Python's Unicode database."""
    return unicodedata.category(char) in CATEGORIES


def escaped(code: int, style: str = "terminal") -> str:
    """How code point `code` is written visibly: ``\\x1b`` below 256 on a terminal (as
    Python and shells write bytes), else ``\\u202e``, ``\\U000e0041`` past the BMP."""
    if code < 0x100 and style == "terminal":
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def table(only: Container[int] | None = None, style: str = "terminal") -> dict[int, str]:
    """A :meth:`str.translate` table writing each hidden code point visibly (those in
    `only`, when given: a use's own choice)."""
    return {c: escaped(c, style) for c in code_points() if only is None or c in only}


def regex_class() -> str:
    """The hidden characters as the inside of a regular-expression ``[...]`` class."""
    return "".join(
        escaped(start, "regex") + ("" if start == end else "-" + escaped(end, "regex"))
        for start, end in RANGES
    )


CLASS = regex_class()
