"""Our own count of a model call the provider reported no usage for, kept per conversation.

The count is :func:`~bothost.llm.base.estimate_tokens` of ``[system, messages, tools]``: the
length of that JSON over four. Serialising the whole request after every call cost ~2 ms at
1,000 messages, for a figure that grows by a message or two per round. JSON's length adds
up, though: a list's is its brackets, its items' lengths and ``", "`` between them. So
:class:`Estimator` keeps, per session, the last request's messages and the length of their
JSON; when the next request starts with the same messages (compared by value, in C, which is
several times cheaper than encoding them), only the new ones are encoded. A request that
does not extend the last one (a summary cut the history, another kind of call) is counted
whole and becomes the new base. The figure is the one :func:`estimate` gives, always:
tests/agent/test_usage_estimate.py compares them over a range of conversations.

One assumption: a message is not changed in place after the call that carried it (the turn
builds fresh copies each round and no provider writes to its request). A message compared
equal by value serialises alike, except numbers of different types that Python calls equal
(``1``, ``1.0`` and ``True``); the turn's messages do not swap one for another.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from bothost.llm.base import CHARS_PER_TOKEN, ChatRequest, ChatResponse, Usage, estimate_tokens

# Conversations whose last request is kept: one per session in a turn at the same time is
# all that helps (a session has one turn at a time), and each holds a list of its messages
# (the message dicts themselves, whose text the history's window keeps anyway).
KEPT_SESSIONS = 64

# estimate_tokens' own serialisation: json.dumps(value, ensure_ascii=False), built once
ENCODE = json.JSONEncoder(ensure_ascii=False).encode
SEPARATOR = len(", ")  # json.dumps' item separator
BRACKETS = len("[]")


def estimate(request: ChatRequest, response: ChatResponse) -> Usage:
    """Our own count of a call the provider reported no usage for (the whole request)."""
    return Usage(
        input=estimate_tokens([request.system, request.messages, request.tools]),
        output=output_tokens(response),
        estimated=True,
    )


def output_tokens(response: ChatResponse) -> int:
    calls = [{"name": c.name, "arguments": c.arguments} for c in response.tool_calls]
    return estimate_tokens(response.text) + (estimate_tokens(calls) if calls else 0)


def list_length(lengths_total: int, count: int) -> int:
    """The length of a JSON list of ``count`` items whose own lengths sum to ``lengths_total``."""
    return BRACKETS + lengths_total + SEPARATOR * max(count - 1, 0)


@dataclass
class Seen:
    """A session's last request: its messages and the sum of their JSON lengths."""

    messages: list[Any]
    length: int


class Estimator:
    """:func:`estimate`, encoding only the messages a session's request added since its last."""

    def __init__(self, kept: int = KEPT_SESSIONS) -> None:
        self.kept = kept
        self.seen: OrderedDict[str, Seen] = OrderedDict()

    def estimate(self, request: ChatRequest, response: ChatResponse, session: str | None) -> Usage:
        if session is None:  # a call outside any conversation: nothing to build on
            return estimate(request, response)
        messages = self.messages_length(request.messages, session)
        whole = list_length(len(ENCODE(request.system)) + messages + len(ENCODE(request.tools)), 3)
        return Usage(
            input=whole // CHARS_PER_TOKEN + 1, output=output_tokens(response), estimated=True
        )

    def messages_length(self, messages: list[Any], session: str) -> int:
        """The length of ``json.dumps(messages)``, from the session's last request if it extends."""
        seen = self.seen.pop(session, None)
        done = 0
        length = 0
        if seen is not None and len(seen.messages) <= len(messages):
            done = len(seen.messages)
            if messages[:done] == seen.messages:
                length = seen.length
            else:
                done = 0
        length += sum(len(ENCODE(m)) for m in messages[done:])
        self.seen[session] = Seen(list(messages), length)
        while len(self.seen) > self.kept:
            self.seen.popitem(last=False)
        return list_length(length, len(messages))
