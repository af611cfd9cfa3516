"""A server's prompts: listed, fetched with arguments, and rendered as one text for a turn.

MCP prompts are templates a *person* chooses (the ``/prompt`` command,
:mod:`bothost.agent.prompt_command`), not something the model calls. ``prompts/get`` answers with
messages — each a role and one content block — which :func:`render` turns into the text
of the person's turn: text as written, images and other binary content saved under
``media/`` and shown as links (:mod:`bothost.mcp.content`), never inlined; at most
``MAX_TEXT`` characters.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bothost.mcp import content, listing

MAX_TEXT = 100_000  # characters of a rendered prompt: a long message, not a whole corpus


@dataclass(frozen=True)
class Argument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class Prompt:
    """One prompt as a server lists it."""

    name: str
    description: str = ""
    arguments: tuple[Argument, ...] = ()

    @classmethod
    def from_listing(cls, item: dict[str, Any]) -> Prompt | None:
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            return None
        arguments = []
        listed = item.get("arguments")
        for arg in listed if isinstance(listed, list) else []:
            if isinstance(arg, dict) and isinstance(arg.get("name"), str):
                described = arg.get("description")
                arguments.append(
                    Argument(
                        arg["name"],
                        described if isinstance(described, str) else "",
                        arg.get("required") is True,
                    )
                )
        about = item.get("description") or item.get("title") or ""
        return cls(name, about if isinstance(about, str) else "", tuple(arguments))


async def list_prompts(session: listing.Requester) -> tuple[list[Prompt], bool]:
    """The server's prompts (and whether the listing was cut); raises McpError."""
    found = await listing.list_all(session, "prompts/list", "prompts")
    prompts = [p for p in map(Prompt.from_listing, found.items) if p is not None]
    return prompts, found.cut


def render(answer: dict[str, Any], media_dir: Path | None) -> str:
    """A ``prompts/get`` result as text: one message alone as it is, several each under its
    role (``[user]``, ``[assistant]``)."""
    messages = answer.get("messages")
    messages = [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    parts = []
    for message in messages:
        block = message.get("content")
        blocks = block if isinstance(block, list) else [block]  # a list in later revisions
        body = content.from_result({"content": blocks}, media_dir).text
        parts.append((str(message.get("role") or "user"), body))
    if len(parts) == 1 and parts[0][0] == "user":
        text = parts[0][1]
    else:
        text = "\n\n".join(f"[{role}]\n{body}" for role, body in parts)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"\n[prompt cut: {len(text) - MAX_TEXT} characters dropped]"
    return text
