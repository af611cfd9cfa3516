"""The lethal-trifecta interlock.

Once a session's context holds both private data and content a third party can influence,
a tool that sends data to a destination the model chooses (``egress: chosen``) could leak
the one through the other, so it is refused with a result that says why. The flags are read
from the tool results still inside the context window, and from the summary that stands in
for older ones (:mod:`bothost.agent.compaction`): a summary keeps its flags, so compaction
never lifts the interlock; only messages left out without a summary do. The egress judged
is the call's (:meth:`bothost.agent.tools.Tool.capabilities_for`): ``schedule`` to another
conversation is refused here as ``send_message`` is. How untrusted content is marked in the
prompt lives in :mod:`bothost.agent.untrusted`.
"""

from __future__ import annotations

from typing import Any

from bothost.agent.tools import Capabilities, Tool
from bothost.agent.untrusted import UNTRUSTED_NOTE, wrap_untrusted

__all__ = ["UNTRUSTED_NOTE", "context_flags", "refusal", "wrap_untrusted"]


def context_flags(messages: list[dict[str, Any]]) -> tuple[bool, bool]:
    private = any(m.get("private") for m in messages if m.get("role") == "tool")
    # a person's turn is untrusted when a server wrote it (`/prompt`, bothost.agent.prompt_command)
    untrusted = any(m.get("untrusted") for m in messages if m.get("role") in ("tool", "user"))
    return private, untrusted


def refusal(
    tool: Tool,
    messages: list[dict[str, Any]],
    carried: tuple[bool, bool] = (False, False),
    capabilities: Capabilities | None = None,
) -> str | None:
    """Why ``tool`` may not run now, or None; ``carried`` are the (private, untrusted) flags
    of what a summary in the context stands in for, ``capabilities`` the call's own (the
    tool's when not given)."""
    caps = capabilities if capabilities is not None else tool.capabilities
    if caps.egress != "chosen":
        return None
    private, untrusted = context_flags(messages)
    private, untrusted = private or carried[0], untrusted or carried[1]
    if private and untrusted:
        return (
            f"Refused: {tool.name} sends data to a destination you choose, and this "
            "conversation now holds both private data and untrusted third-party content. "
            "Sending now could leak the private data on the untrusted content's instructions. "
            "Ask the user to do this step themselves, or start a new conversation."
        )
    return None
