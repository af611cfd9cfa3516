"""What a web chat session may be called: one rule, in a module light enough for the
config's check of ``tick.deliver_to: web:<session>`` to need no platform.

The web platform, the chat API and ``tick.deliver_to`` all hold session names to it.
"""

from __future__ import annotations

import re
from typing import Any

# A session name: 1-64 of these characters, not only dots ("." and ".." name a path's here
# and parent, and a page URL or a file named after a session would follow them).
SESSION_PATTERN = re.compile(r"(?!\.+$)[A-Za-z0-9_.-]{1,64}")
SESSION_FORM = "1-64 characters of A-Z a-z 0-9 _ . -, not only dots"


def valid_session(name: Any) -> bool:
    return isinstance(name, str) and SESSION_PATTERN.fullmatch(name) is not None


def target_problem(channel: str) -> str | None:
    """Why ``tick.deliver_to: web:<channel>`` cannot work, or None: a briefing goes to a
    session, and a session name a page could never open is refused at config load."""
    return None if valid_session(channel) else f"a web session must be {SESSION_FORM}"
