"""A ``tools/call`` result turned into what the agent shows the model: :class:`CallResult`.

The model reads what a person would: the content blocks when the server sent any (text
blocks joined; images, audio and embedded blobs saved under ``media/`` and shown as links,
never inlined; resource links and embedded text resources with their URIs, and so a blob whose
type says text and that is UTF-8, which the model could not open as a link). Only when there
are no blocks is ``structuredContent`` shown, compactly, a lone string value unwrapped:
SDK servers mirror a ``str`` result as ``{"result": text}`` and file servers as
``{"content": text}``, which as JSON puts a whole file on one escaped line. The structured
value is kept on the result for callers that want the data. A JSON-RPC error or a timeout is a
result with ``is_error`` set, never an exception, so a turn can go on. An error result's text
loses the TypeScript SDK's ``MCP error -32602:`` prefix (the code is for programs; ``raw``
keeps it). A block annotated for the user's eyes only (``audience: ["user"]``) is kept out
of what the model reads and put in ``for_user``, for the person in the conversation.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bothost.mcp import media
from bothost.mcp.validate import validate

# How the TypeScript SDK words an McpError a tool threw (bad arguments, an unknown tool) when it
# answers it as an error result: "MCP error -32602: Input validation error: …"
SDK_ERROR_PREFIX = re.compile(r"^MCP error -?\d+: ")
MALFORMED_RESULT = "the server's result had no content (a malformed tools/call answer)"
MALFORMED_BLOCK = "[malformed content block]"
BLOCK_TYPE = re.compile(r"[a-z_]{1,32}")  # an unknown block type shown only if a plain word
# Blob types that are text, read as text rather than saved (as media.named_type writes them:
# known to Python's mimetypes or not, as YAML's are not before 3.13)
TEXT_TYPES = re.compile(r"text/.+|application/(json|xml|x-yaml|yaml|javascript|x-sh)")


@dataclass
class CallResult:
    """One tool call's outcome, ready for the model."""

    text: str
    structured: Any = None
    is_error: bool = False
    media: list[Path] = field(default_factory=list)
    raw: dict[str, Any] | None = None
    for_user: str = ""  # blocks whose audience is the user only, kept out of ``text``

    @classmethod
    def failure(cls, message: str) -> CallResult:
        return cls(text=message, is_error=True)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "structured": self.structured,
            "is_error": self.is_error,
            "media": [str(p) for p in self.media],
            "for_user": self.for_user,
        }


def from_result(result: dict[str, Any], media_dir: Path | None) -> CallResult:
    """Convert a ``CallToolResult`` dict.

    A result with neither a ``content`` list nor ``structuredContent`` (a null result, a
    string for content) is an error result: read as an empty success, the model would take
    "it worked" from a server that said nothing. A malformed block is named where it stood.
    """
    blocks = result.get("content")
    structured = result.get("structuredContent")
    if not isinstance(blocks, list):
        if structured is None:
            return CallResult(text=MALFORMED_RESULT, is_error=True, raw=result)
        blocks = []
    is_error = bool(result.get("isError"))
    parts: list[str] = []
    users: list[str] = []
    saved: list[Path] = []
    for block in blocks:
        if not isinstance(block, dict) or (
            block.get("type") == "text" and not isinstance(block.get("text"), str)
        ):
            parts.append(MALFORMED_BLOCK)
            continue
        if block.get("type") == "text":
            text = block["text"]
            shown = SDK_ERROR_PREFIX.sub("", text) if is_error else text
        else:
            shown = _describe(block, media_dir, saved)
        (users if for_user_only(block) else parts).append(shown)
    if users:
        parts.append(f"[{len(users)} content block(s) meant for the user only: shown to them]")
    if not parts and structured is not None:
        parts.append(_render(structured))
    return CallResult(
        text="\n".join(filter(None, parts)),  # the empty parts left out
        structured=structured,
        is_error=is_error,
        media=saved,
        raw=result,
        for_user="\n".join(filter(None, users)),
    )


def for_user_only(block: dict[str, Any]) -> bool:
    """Whether a block's ``annotations.audience`` names the user and not the assistant: the
    spec's way of saying the model is not to read it (a long table, a link for a person).
    A block for the assistant only is the model's already: the user reads only the reply."""
    annotations = block.get("annotations")
    audience = annotations.get("audience") if isinstance(annotations, dict) else None
    return isinstance(audience, list) and "user" in audience and "assistant" not in audience


def checked(result: CallResult, tool: dict[str, Any] | None, label: str) -> CallResult:
    """``result`` as an error when tool definition ``tool`` declares an ``outputSchema`` that
    its structured content breaks or omits: the spec says a server MUST match it, and a
    caller of ``result.structured`` (``mcp call --json``, a plugin) relies on the declared
    shape. The server's text stays below the reason, for the model and the person."""
    schema = (tool or {}).get("outputSchema")
    if result.is_error or not isinstance(schema, dict):
        return result
    if result.structured is None:
        problem = "it sent no structured content"
    else:
        found = validate(schema, result.structured, "")
        if found is None:
            return result
        problem = found.replace("arguments: ", "the value: ", 1)
    why = f"{label} sent a result that does not match its output schema ({problem})"
    result.is_error = True
    result.text = f"{why}\n{result.text}" if result.text else why
    return result


def _render(structured: Any) -> str:
    if isinstance(structured, dict) and len(structured) == 1:
        (only,) = structured.values()
        if isinstance(only, str):
            return only
    return json.dumps(structured, ensure_ascii=False, separators=(",", ":"))


def _describe(block: dict[str, Any], media_dir: Path | None, saved: list[Path]) -> str:
    kind = block.get("type")
    if kind in ("image", "audio"):
        return _save(kind, block.get("data"), block.get("mimeType"), media_dir, saved)
    if kind == "resource_link":
        label = block.get("title") or block.get("name") or "resource"
        return f"[resource link: {label} <{block.get('uri', '')}>]"
    if kind == "resource":
        resource = block.get("resource")
        if not isinstance(resource, dict):
            return "[resource (malformed)]"
        uri = resource.get("uri", "")
        if "text" in resource:
            return f"[resource {uri}]\n{resource['text']}"
        if "blob" in resource:
            text = _text_blob(resource["blob"], resource.get("mimeType"))
            if text is not None:  # a text file sent base64: the model reads it as text
                return f"[resource {uri}]\n{text}"
            return _save(
                "resource", resource["blob"], resource.get("mimeType"), media_dir, saved, uri
            )
        return f"[resource {uri}]"
    if isinstance(kind, str) and BLOCK_TYPE.fullmatch(kind):
        return f"[unsupported content type {kind!r}]"
    return "[unsupported content block]"  # the server's words are not echoed


def _text_blob(data: Any, given: Any) -> str | None:
    """A blob's text when its type says text (``text/*``, JSON, XML) and it is UTF-8: a
    ``/media/`` link is for a person's browser, and the model cannot open one."""
    mime = media.named_type(given)
    if not isinstance(data, str) or mime is None or not TEXT_TYPES.fullmatch(mime):
        return None
    try:
        return base64.b64decode(data, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def _save(
    kind: str, data: Any, given: Any, media_dir: Path | None, saved: list[Path], uri: str = ""
) -> str:
    origin = f" {uri}" if uri else ""
    mime = media.known_type(given)  # a server's own text never reaches the note
    if media_dir is None or not isinstance(data, str):
        return f"[{kind}{origin} ({mime or 'unknown type'}) not saved]"
    try:
        path = media.save_base64(media_dir, data, mime)
    except media.MediaError as exc:
        return f"[{kind}{origin} ({mime or 'unknown type'}) not saved: {exc}]"
    saved.append(path)
    size = media.human_size(path.stat().st_size)
    return f"[{kind}{origin}: {media.link(path)} ({mime or 'unknown type'}, {size})]"
