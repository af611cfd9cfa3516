"""Tab completion of ``/prompt`` lines at ``bothost chat``'s prompt (GNU readline).

The prompt is read by ``input()`` in a daemon thread (:func:`bothost.platform.terminal_input`),
so readline calls the completer there; it asks the host on the host's event loop
(``HostApi.complete_prompt``, the same words the web chat offers) and waits a bounded time.
Completion is a convenience: no readline (some platforms), a slow or failing server, or any
error means no suggestions, never an exception at the prompt.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from bothost.agent.prompt_command import WORDS

logger = logging.getLogger(__name__)
WAIT_SECONDS = 3.0  # the longest a Tab waits for the host; past it, nothing is offered


def completer(host: Any, loop: asyncio.AbstractEventLoop, line: Callable[[], str]) -> Any:
    """A readline completer (``complete(text, state)``) for ``/prompt`` lines; ``line()`` is
    the line typed up to the cursor. The suggestions are fetched once, at state 0.

    Only those that go on from the word typed (`text`) are offered: readline replaces the
    word with what the matches have in common, so one that does not (a quoted value,
    ``city='Zurich West'`` for ``city=Zu``) would erase what was typed."""
    found: list[str] = []

    def complete(text: str, state: int) -> str | None:
        if state == 0:
            found[:] = [w for w in suggestions(host, loop, line()) if w.startswith(text)]
        return found[state] if state < len(found) else None

    return complete


def suggestions(host: Any, loop: asyncio.AbstractEventLoop, typed: str) -> list[str]:
    """The words that may replace the last word of `typed`; none for a line not ``/prompt``."""
    first = typed.lstrip().split(" ", 1)[0].lower()
    if first not in WORDS or " " not in typed.lstrip():
        return []
    future = None
    try:
        future = asyncio.run_coroutine_threadsafe(host.complete_prompt(typed), loop)
        return [str(word) for word in future.result(timeout=WAIT_SECONDS)]
    except Exception:  # a boundary: the prompt goes on whatever completion did (or a closed loop)
        if future is not None:
            future.cancel()
        logger.debug("completing %r offered nothing", typed, exc_info=True)
        return []


def install(host: Any, loop: asyncio.AbstractEventLoop) -> bool:
    """Tab completes ``/prompt`` lines at ``input()``'s prompt; whether it could."""
    try:
        import readline
    except ImportError:  # no readline on this platform: the prompt works without it
        return False
    readline.set_completer(
        completer(host, loop, lambda: readline.get_line_buffer()[: readline.get_endidx()])
    )
    # a word is what /prompt reads as one: "wx/forecast", "city=Zu" (not split at / or =)
    readline.set_completer_delims(" \t\n")
    if "libedit" in (readline.__doc__ or ""):  # macOS's readline stand-in binds differently
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    return True
