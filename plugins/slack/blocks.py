"""Briefings as Block Kit: a header, sections by priority, and buttons on each item.

Layout follows the design's briefing: URGENT, HIGH and FYI sections, each item with its
"why", then one counted line for low-priority and one for muted events. Every item gets
Acknowledge, Snooze, Mute, "Less like this" and "More like this" buttons whose value carries
the item's event ids (as ranges, ``3-7,12``, to stay within Slack's 2000-character value
limit). Slack allows 50 blocks and 3000 characters per section: items that do not fit are
listed together at the end with one set of buttons for all of them (without the two "like
this": a rule is made from one item). The plain-text briefing is always sent as ``text``,
which notifications and screen readers use.
"""

from __future__ import annotations

from typing import Any

from bothost.plugins.slack.mrkdwn import escape, sanitize

from bothost.models import Briefing, BriefingItem

PRIORITIES = (("urgent", "URGENT"), ("high", "HIGH"), ("normal", "FYI"))
MAX_BLOCKS = 50  # Slack's limit per message
SECTION_LIMIT = 3000  # characters of mrkdwn in one section
HEADER_LIMIT = 150  # characters of a header block
VALUE_LIMIT = 2000  # characters of a button value
TEXT_LIMIT = 3900  # characters of the plain-text fallback
ACK, SNOOZE, MUTE = "bothost_ack", "bothost_snooze", "bothost_mute"
LESS, MORE = "bothost_less", "bothost_more"  # propose a triage rule: see like_this.py
BUTTONS = ((ACK, "Acknowledge", "primary"), (SNOOZE, "Snooze 4h", None), (MUTE, "Mute", "danger"))
LIKE_THIS = ((LESS, "Less like this", None), (MORE, "More like this", None))  # one item's only
MAX_RANGE = 10_000  # ids one range of a (forged) button value may expand to
TAIL_BLOCKS = 4  # room kept for the overflow section, its buttons and the counted lines


def render(briefing: Briefing) -> tuple[list[dict[str, Any]], str]:
    """The blocks and the fallback text of a briefing."""
    blocks: list[dict[str, Any]] = [header(briefing.title or "Briefing")]
    overflow: list[BriefingItem] = []
    for label, items in grouped(briefing.items):
        if len(blocks) + 3 > MAX_BLOCKS - TAIL_BLOCKS:
            overflow += items
            continue
        blocks.append(section(f"*{label}*"))
        for item in items:
            if len(blocks) + 2 > MAX_BLOCKS - TAIL_BLOCKS:
                overflow.append(item)
                continue
            blocks.append(section(item_line(item)))
            value = encode_ids(item.event_ids)
            if value:
                blocks.append(buttons(value, f"item{len(blocks)}", like_this=True))
    if overflow:
        lines = "\n".join(item_line(i) for i in overflow)
        blocks.append(section(f"*…and {len(overflow)} more*\n{lines}"))
        value = encode_ids([e for i in overflow for e in i.event_ids])
        if value:
            blocks.append(buttons(value, "overflow"))
    counted = counted_lines(briefing)
    if counted:
        blocks.append(
            {
                "type": "context",
                "elements": [
                    {"type": "mrkdwn", "text": clip(line, SECTION_LIMIT)} for line in counted
                ],
            }
        )
    return blocks, clip(briefing.text or briefing.title, TEXT_LIMIT)


def grouped(items: list[BriefingItem]) -> list[tuple[str, list[BriefingItem]]]:
    known = {p for p, _ in PRIORITIES}
    groups = [(label, [i for i in items if i.priority == p]) for p, label in PRIORITIES]
    others = [i for i in items if i.priority not in known]
    if others:
        groups.append(("OTHER", others))
    return [(label, group) for label, group in groups if group]


def item_line(item: BriefingItem) -> str:
    line = "• " + escape(sanitize(item.summary))
    if item.why:
        line += " — " + escape(sanitize(item.why))
    if item.source:
        line += f" _({escape(item.source)})_"
    if item.url and item.url.startswith(("https://", "http://")):
        line += " <" + item.url.replace("&", "&amp;").replace(">", "%3E") + ">"
    return line


def counted_lines(briefing: Briefing) -> list[str]:
    lines = []
    if briefing.low_count:
        lines.append(escape(briefing.low_line()))
    if briefing.muted_count:
        summary = f" ({escape(briefing.muted_summary)})" if briefing.muted_summary else ""
        lines.append(f"Muted: {briefing.muted_count}{summary}.")
    if briefing.footer:
        lines.append(escape(briefing.footer))
    return lines


def header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text", "text": clip(text, HEADER_LIMIT)}}


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(text, SECTION_LIMIT)}}


def context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": clip(text, SECTION_LIMIT)}]}


def buttons(value: str, block_id: str, like_this: bool = False) -> dict[str, Any]:
    elements = []
    for action_id, label, style in BUTTONS + (LIKE_THIS if like_this else ()):
        button: dict[str, Any] = {
            "type": "button",
            "action_id": action_id,
            "value": value,
            "text": {"type": "plain_text", "text": label},
        }
        if style:
            button["style"] = style
        elements.append(button)
    return {"type": "actions", "block_id": block_id, "elements": elements}


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def encode_ids(ids: list[int]) -> str | None:
    """Event ids as ranges (``1-4,9``); None when there are none or they do not fit."""
    parts: list[str] = []
    ordered = sorted(set(int(i) for i in ids))
    start = prev = None
    for i in [*ordered, None]:
        if start is not None and prev is not None and (i is None or i != prev + 1):
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = None
        if i is not None and start is None:
            start = i
        prev = i
    value = ",".join(parts)
    return value if value and len(value) <= VALUE_LIMIT else None


def decode_ids(value: str) -> list[int]:
    ids: list[int] = []
    for part in value.split(","):
        low, _, high = part.partition("-")
        if low.isdigit() and (not high or high.isdigit()):
            first, last = int(low), int(high or low)
            if 0 <= last - first < MAX_RANGE:
                ids += range(first, last + 1)
    return ids
