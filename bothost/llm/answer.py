"""What a provider takes of an endpoint's answer: the limits, and the shape of each value.

``llm.base_url`` may name anything that claims to speak the API (a local server, a proxy, a
hostile endpoint). So each value a provider reads of a streamed answer passes through an
:class:`Answer`, which holds the answer's size to :data:`MAX_ANSWER_CHARS` and its tool
calls to :data:`MAX_TOOL_CALLS`, and turns a value of the wrong type into the one line of
a cut answer (:class:`StreamCutError`) instead of a ``TypeError`` deep in a provider, or
memory that grows for as long as the endpoint sends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bothost.jsondecode import SURROGATE
from bothost.llm.base import StreamCutError, ToolCallRequest, load_json

# The text, tool names and arguments one answer may hold: the longest answers models stream
# (128k output tokens) are about half a million characters, so this is eight times that.
MAX_ANSWER_CHARS = 4_000_000
# Tool calls (Anthropic: content blocks) in one answer; OpenAI takes at most 128 tools in a
# request, and no model calls more in one round.
MAX_TOOL_CALLS = 128


class Answer:
    """One answer's reader: ``url`` (masked) and ``clean`` (a server's words made fit for a
    chat: one line, no key) for its error lines."""

    def __init__(self, url: str, clean: Callable[[str], str] = str) -> None:
        self.url = url
        self.clean = clean
        self.chars = 0

    def cut(self, detail: str) -> StreamCutError:
        return StreamCutError(self.url, detail)

    def loads(self, data: str, what: str) -> dict[str, Any]:
        """One event's JSON object; cut when it is no object (malformed, nested too deep,
        a number past a float's range)."""
        try:
            value = load_json(data)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise self.cut(f"a broken {what}: {self.clean(data)[:80]!r}")  # masked, then cut
        return value

    def mapping(self, value: Any, what: str) -> dict[str, Any]:
        """``value`` when an object; ``{}`` when absent (``null``)."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.cut(f"{what} is {type(value).__name__}, not an object")
        return value

    def items(self, value: Any, what: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.cut(f"{what} is {type(value).__name__}, not a list")
        return value

    def text(self, value: Any, what: str) -> str:
        """``value`` when a string (``""`` when absent), counted against the answer's size."""
        if value is None:
            return ""
        if not isinstance(value, str):
            raise self.cut(f"{what} is {type(value).__name__}, not a string")
        self.chars += len(value)
        if self.chars > MAX_ANSWER_CHARS:
            raise self.cut(f"longer than the {MAX_ANSWER_CHARS:,} characters of one answer")
        return whole_characters(value)

    def index(self, value: Any, what: str) -> int:
        """A position: any count (it only orders), not a bool, a float or a negative."""
        if type(value) is not int or value < 0:  # bool is a subclass of int
            raise self.cut(f"{what} is {str(value)[:20]}, not a count")
        return value

    def room(self, taken: int) -> None:
        """Cut the answer when a tool call beyond the ``taken`` ones would pass the limit."""
        if taken >= MAX_TOOL_CALLS:
            raise self.cut(f"more than {MAX_TOOL_CALLS} tool calls in one answer")


def whole_characters(text: str) -> str:
    """``text`` with each half of a UTF-16 pair as U+FFFD: JSON can escape one alone
    (``\\ud800``), and no UTF-8 store, platform or log takes it."""
    return text if text.isascii() else SURROGATE.sub("\ufffd", text)  # json.loads joined pairs


def unique_ids(calls: list[ToolCallRequest]) -> None:
    """Give each call its own id: a result is matched to its call by id, in the agent and
    in the next request."""
    seen: set[str] = set()
    for call in calls:
        base, n = call.id, 1
        while call.id in seen:
            n += 1
            call.id = f"{base}_{n}"
        seen.add(call.id)
