"""A server's resources as text the model can read: the listing, and one resource read.

The listing names each resource (URI, name or title, type, size, description) and each
resource template (its URI pattern), so the model can pick one to read. A read returns text
contents as text and binary ones (``blob``) saved under ``media/`` and shown as a link,
through the same path as binary tool results (:mod:`bothost.mcp.media`): base64 is never
inlined. Both are bounded: the listing by :mod:`bothost.mcp.listing`, a read by
``MAX_TEXT`` characters and ``MAX_CONTENTS`` parts (the agent's output budget then cuts
what the model sees and keeps the rest readable through ``read_output``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bothost.mcp import content, jsonrpc, listing
from bothost.mcp.content import CallResult
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.media import human_size

MAX_TEXT = 1_000_000  # characters of one read kept; the rest is dropped, and the cut is said
MAX_CONTENTS = 50  # parts of one read (a directory-like resource may return many)
MAX_DESCRIPTION = 200  # characters of a description per listed entry


async def listing_text(session: listing.Requester, server: str) -> CallResult:
    """Resources and resource templates of ``server``, one per line; raises McpError."""
    return CallResult(listing_lines(server, *await listings(session)))


async def listings(session: listing.Requester) -> tuple[listing.Listing, listing.Listing]:
    """The resources and the resource templates, as listed; raises McpError."""
    resources = await listing.list_all(session, "resources/list", "resources")
    try:
        templates = await listing.list_all(session, "resources/templates/list", "resourceTemplates")
    except McpError as exc:  # templates are optional; the resources alone are still worth it
        if exc.code in (jsonrpc.CONNECTION_CLOSED, jsonrpc.REQUEST_TIMEOUT):
            raise
        templates = listing.Listing()
    return resources, templates


def listing_lines(server: str, resources: listing.Listing, templates: listing.Listing) -> str:
    lines = [f"Resources of {server} (read one with its uri):"] if resources.items else []
    lines += [entry(r, "uri") for r in resources.items]
    if resources.cut:
        lines.append(f"(listing stopped at {len(resources.items)} resources)")
    if templates.items:
        lines.append(f"Resource templates of {server} (fill in the {{…}} parts, then read):")
        lines += [entry(t, "uriTemplate") for t in templates.items]
    if templates.cut:
        lines.append(f"(listing stopped at {len(templates.items)} templates)")
    if not lines:
        lines = [f"{server} lists no resources."]
    return "\n".join(lines)


def entry(item: dict[str, Any], key: str) -> str:
    label = item.get("title") or item.get("name") or ""
    facts = [str(f) for f in (item.get("mimeType"), size(item.get("size"))) if f]
    line = f"- {item.get(key, '?')}"
    if label:
        line += f" — {label}"
    if facts:
        line += f" ({', '.join(facts)})"
    description = item.get("description")
    if isinstance(description, str) and description.strip():
        line += f": {' '.join(description.split())[:MAX_DESCRIPTION]}"
    return line


def size(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return human_size(value)
    return ""


def read_result(answer: dict[str, Any], media_dir: Path | None) -> CallResult:
    """A ``resources/read`` result as text: text parts as written, blobs saved as media."""
    parts = answer.get("contents")
    parts = [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    blocks = [{"type": "resource", "resource": p} for p in parts[:MAX_CONTENTS]]
    result = content.from_result({"content": blocks}, media_dir)
    notes = []
    if len(parts) > MAX_CONTENTS:
        notes.append(f"[{len(parts) - MAX_CONTENTS} more parts not shown]")
    if len(result.text) > MAX_TEXT:
        cut = len(result.text) - MAX_TEXT
        result.text = result.text[:MAX_TEXT]
        notes.append(f"[resource cut: {cut} of {cut + MAX_TEXT} characters dropped]")
    if not parts:
        notes.append("[the resource has no contents]")
    result.text = "\n".join([result.text, *notes]) if result.text else "\n".join(notes)
    result.raw = None  # the blobs live in media/ now; keep no base64 in memory
    return result
