"""Decoding JSON and text from outside the process: HTTP bodies and command-line arguments.

Python's decoder accepts input that breaks later, far from where it came in: nesting a
thousand levels deep raises ``RecursionError`` (in the decoder, or later in whatever walks
the value), ``"\\ud800"`` decodes to a lone surrogate that SQLite and UTF-8 output cannot
encode, ``NaN`` is not JSON, and an integer of 5,000 digits raises ``ValueError``. Every
entry point decodes through :func:`decode`, which refuses all of these up front with
:class:`JsonInputError`, whose message is one short line for the sender (HTTP answers it
with 400). Depth is measured before decoding, on the text with its strings removed, so a
deep input never reaches the recursive decoder. An object that writes one key twice is
refused too (see :data:`DECODER`).
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Callable
from itertools import accumulate
from typing import Any

MAX_DEPTH = 64  # real payloads nest < 15 levels; far below any recursion limit
MAX_BYTES = 4 * 1024 * 1024  # the host's largest accepted body (aiohttp client_max_size)

STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
NOT_BRACKET = re.compile(r"[^\[\]{}]+")
STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # as signed bytes: +1 and -1
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
SURROGATE = re.compile("[\ud800-\udfff]")


class JsonInputError(ValueError):
    """The input is not JSON (or text) we accept; ``str()`` is the reason, one line."""


def decode(data: bytes | str, *, max_depth: int = MAX_DEPTH, max_bytes: int = MAX_BYTES) -> Any:
    """The JSON value in ``data`` (UTF-8 bytes or text), checked; raises JsonInputError."""
    if len(data) > max_bytes:
        raise JsonInputError(f"the JSON is larger than {max_bytes} bytes")
    if isinstance(data, bytes | bytearray):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            raise JsonInputError("the body is not UTF-8") from None
    else:
        text = data
        check_text(text, "the JSON")
    if too_deep(text, max_depth):
        raise JsonInputError(f"the JSON is nested deeper than {max_depth} levels")
    try:
        value = scanned(text)
    except JsonInputError:
        raise
    except json.JSONDecodeError as exc:
        raise JsonInputError(
            f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer past int_max_str_digits
        raise JsonInputError(f"not valid JSON: {str(exc).split(';')[0][:120]}") from None
    # an escaped surrogate starts with a lowercase \u (JSON has no other form): a body without
    # one, nearly every body, costs one substring test and not a regular expression's scan
    if "\\u" in text and SURROGATE_ESCAPE.search(text) and holds_surrogate(value):
        raise JsonInputError(
            "the JSON holds a lone surrogate (\\ud800-\\udfff), which is not a character"
        )
    return value


def scanned(text: str) -> Any:
    """``DECODER.decode(text)``, the C scanner called directly when ``text`` is one value
    from its first character to its last (a body as senders send it), without ``decode``'s
    two Python calls and two whitespace matches around the scan (issue 19: per webhook on
    the event loop, docs/webhooks.md). Anything else (whitespace around the value, extra
    data, nothing to scan) takes ``decode`` itself, so its errors are the ones raised."""
    try:
        value, end = SCAN(text, 0)
    except StopIteration:
        return DECODER.decode(text)
    if end != len(text):
        return DECODER.decode(text)
    return value


def decode_object(data: bytes | str, **limits: Any) -> dict[str, Any]:
    """Like :func:`decode`, for input that must be a JSON object."""
    value = decode(data, **limits)
    if not isinstance(value, dict):
        raise JsonInputError("the JSON must be an object ({...})")
    return value


def check_text(text: str, what: str = "the text") -> str:
    """``text`` itself when it is storable Unicode; raises JsonInputError otherwise.

    A lone surrogate comes from an escape in JSON or from bytes that were not UTF-8 in a
    command-line argument (Python keeps those as surrogates: ``surrogateescape``).
    """
    if SURROGATE.search(text):
        raise JsonInputError(f"{what} is not valid UTF-8 (it holds a lone surrogate)")
    return text


def too_deep(text: str, max_depth: int) -> bool:
    """Whether brackets outside strings nest deeper than ``max_depth``.

    Linear and in C but for one comparison per bracket: strings and everything but
    brackets are deleted, brackets become +1 / -1 bytes, and the deepest point is the
    largest running sum.
    """
    if text.count("[") + text.count("{") <= max_depth:
        return False
    brackets = NOT_BRACKET.sub("", STRING.sub("", text))
    if re.search(rf"[\[{{]{{{max_depth + 1}}}", brackets):  # the common attack, at once
        return True
    steps = array("b", brackets.encode("ascii").translate(STEPS))
    return max(accumulate(steps), default=0) > max_depth


def holds_surrogate(value: Any) -> bool:
    """Whether any string (key or value) in a decoded value holds a surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def refuse_constant(name: str) -> Any:
    raise JsonInputError(f"not valid JSON: {name} is not a JSON number")


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are all different; a key written twice is refused."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise JsonInputError(f"the JSON repeats the key {key[:80]!r} in one object")
            seen.add(key)
    return found


# one decoder for every call: json.loads with an argument builds a new one each time, which
# was a measurable part of a webhook's cost (issue 19). Duplicate keys are refused: readers
# disagree on which value counts (Python keeps the last, others the first), and a body whose
# signature or ids mean one thing to a proxy or the sender's validator and another to us is
# the start of a bypass. Building each object through the hook costs ~2-4 µs per object
# (a webhook body has one or two), against ~300 µs of CPU per accepted webhook
# (bench/webhook.py); measured again on the bench's body (thread CPU, best of 9 alternating):
# 4.4 µs with the hook against 3.1 µs without, so an exact check after decoding (counting
# the colons outside strings against the keys found) could save at most ~1.3 µs and would
# cost a walk of every list; the hook stays.
DECODER = json.JSONDecoder(parse_constant=refuse_constant, object_pairs_hook=unique_object)
# the C scanner with DECODER's hooks (set by JSONDecoder.__init__; typeshed does not name it)
SCAN: Callable[[str, int], tuple[Any, int]] = DECODER.scan_once  # type: ignore[attr-defined]
