"""Completing a ``/prompt`` line as it is typed: server and prompt names, argument values.

The web chat (``GET /api/prompt/complete``) and the terminal's Tab (``bothost chat``) both
ask :func:`candidates` for the words that may replace the last one of a partly typed line:

* ``/prompt fi`` → the servers with prompts whose names start so (``files/``);
* ``/prompt files/su`` → that server's prompts (``files/summarize``);
* ``/prompt files/summarize st`` → the prompt's argument names (``style=``);
* ``/prompt files/summarize style=sh`` → what the server suggests (``completion/complete``
  with the arguments typed before as its ``context``: MCP completions), for a server that
  declares ``completions``; none for one that does not.

What a server suggests is a third party's text: at most ``MAX_VALUES`` values are taken,
each a string of at most ``MAX_VALUE`` characters with no control or hidden characters,
and one with a space comes back shell-quoted, as ``/prompt`` reads it. Failures (an
unknown server, a server that errs or is slow) complete nothing: typing goes on.
"""

from __future__ import annotations

import shlex
from typing import Any

from bothost import hidden
from bothost.agent.prompt_command import WORDS

MAX_VALUES = 100  # the spec's own bound on one answer's values
MAX_VALUE = 200  # characters of one suggested value


def usable(value: Any) -> bool:
    """Whether a suggested value may be offered (a short string a person can read)."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= MAX_VALUE
        and not any(hidden.is_hidden(c) or c in "\r\n\t" for c in value)
    )


def split(text: str) -> list[str] | None:
    """The words typed so far, the last one possibly empty (a line ending in a space)."""
    try:
        words = shlex.split(text)
    except ValueError:
        return None  # an open quote: nothing to complete with confidence
    if text.endswith(" ") or not words:
        words.append("")
    return words


async def candidates(text: str, manager: Any) -> list[str]:
    """The words that may replace the last word of `text` (a ``/prompt`` line), sorted."""
    words = split(text)
    if manager is None or words is None or words[0].lower() not in WORDS or len(words) < 2:
        return []
    try:
        if len(words) == 2:
            return await names(words[1], manager)
        return await arguments(words[1], words[2:-1], words[-1], manager)
    except ValueError:  # the manager's errors (unknown server, a failed listing)
        return []


async def names(typed: str, manager: Any) -> list[str]:
    server, slash, prompt = typed.partition("/")
    if not slash:
        return [f"{s}/" for s in await manager.prompt_servers() if s.startswith(server)]
    found = await manager.list_prompts(server)
    return sorted(f"{server}/{p.name}" for p in found if p.name.startswith(prompt))


async def arguments(target: str, before: list[str], last: str, manager: Any) -> list[str]:
    server, _, name = target.partition("/")
    prompt = next((p for p in await manager.list_prompts(server) if p.name == name), None)
    if prompt is None:
        return []
    given = dict(w.partition("=")[::2] for w in before if "=" in w)
    key, sep, value = last.partition("=")
    if not sep:
        return sorted(f"{a.name}=" for a in prompt.arguments if a.name.startswith(key))
    if key not in {a.name for a in prompt.arguments}:
        return []
    values = await manager.complete_argument(server, name, key, value, given)
    return [f"{key}={shlex.quote(v)}" for v in values[:MAX_VALUES] if usable(v)]
