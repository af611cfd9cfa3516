"""Model text made safe and readable for Slack: Markdown → mrkdwn, sanitising, splitting.

Everything the model writes is treated as untrusted: workspace-wide pings (``<!channel>``,
``<!here>``, ``<!everyone>``, user-group pings) are removed, and links whose visible text
hides their target (``<url|text>``, ``[text](url)``) are rewritten so the URL shows. Only
plain user and channel mentions (``<@U…>``, ``<#C…>``) and bare links survive as Slack
markup; every other ``<``, ``>`` and ``&`` is escaped. Code spans and fences are kept
verbatim (escaped, never reformatted). Long text is split at paragraph or line breaks,
reopening a code fence that a split cuts through.
"""

from __future__ import annotations

import re

MESSAGE_LIMIT = 3900  # Slack truncates long messages and advises ≤ 4000 characters
FENCE = "```"

SPECIAL_MENTION = re.compile(r"<!(?:channel|here|everyone|subteam\^[^>]*)(?:\|[^>]*)?>", re.I)
DISGUISED = re.compile(r"<([^<>@#!|\s][^<>|\s]*)\|([^<>]*)>")
MD_LINK = re.compile(r"!?\[([^\]\n]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
KEPT_ANGLE = re.compile(r"<(?:@[UW][A-Z0-9]+|#C[A-Z0-9]+(?:\|[\w-]*)?|https?://[^<>|\s]+)>")
CODE_FENCE = re.compile(r"```[^\n`]*\n?(.*?)(?:```|\Z)", re.S)
INLINE_CODE = re.compile(r"`([^`\n]+)`")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)
BULLET = re.compile(r"^(\s*)[*+-]\s+", re.M)
BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
ITALIC = re.compile(r"(?<![*\w])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![*\w])")
STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
OPEN_ANGLE = re.compile(r"<[^<>\s]*(?:\|[^<>]*)?")
OPEN_LINK = re.compile(r"\[[^\]\n]*(?:\](?:\([^)\s]*)?)?")
HOLD_LIMIT = 400  # how far back a stream may hold an unfinished `<…` or `[…](…` before giving up


def sanitize(text: str) -> str:
    """Remove workspace-wide pings and undisguise ``<url|text>`` links."""
    while True:  # removing one ping can join the text around it into another
        cleaned = SPECIAL_MENTION.sub("", text)
        cleaned = DISGUISED.sub(lambda m: link_text(m.group(2), m.group(1)), cleaned)
        if cleaned == text:
            return text
        text = cleaned


def link_text(label: str, url: str) -> str:
    label = label.strip()
    return url if not label or label == url else f"{label} ({url})"


def undisguise_markdown(text: str) -> str:
    """``[text](url)`` → ``text (url)``: for Markdown that Slack renders itself (streams)."""
    return MD_LINK.sub(lambda m: link_text(m.group(1), m.group(2)), sanitize(text))


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_mrkdwn(markdown: str) -> str:
    """Convert model Markdown to Slack mrkdwn, sanitised."""
    out: list[str] = []
    pos = 0
    for match in CODE_FENCE.finditer(markdown):
        out.append(convert_prose(markdown[pos : match.start()]))
        out.append(FENCE + "\n" + escape(match.group(1).rstrip("\n")) + "\n" + FENCE)
        pos = match.end()
    out.append(convert_prose(markdown[pos:]))
    return "".join(out).strip()


def convert_prose(text: str) -> str:
    kept: list[str] = []

    def keep(value: str) -> str:
        kept.append(value)
        return f"\x00{len(kept) - 1}\x00"

    text = sanitize(text.replace("\x00", ""))
    text = INLINE_CODE.sub(lambda m: keep("`" + escape(m.group(1)) + "`"), text)
    text = MD_LINK.sub(lambda m: keep(markdown_link(m.group(1), m.group(2))), text)
    text = KEPT_ANGLE.sub(lambda m: keep(m.group(0)), text)
    text = escape(text)
    text = HEADING.sub(lambda m: keep("*" + m.group(1).strip("*_ ") + "*"), text)
    text = BULLET.sub(lambda m: m.group(1) + "• ", text)
    text = ITALIC.sub(r"_\1_", text)
    text = BOLD.sub(r"*\2*", text)
    text = STRIKE.sub(r"~\1~", text)
    return re.sub(r"\x00(\d+)\x00", lambda m: kept[int(m.group(1))], text)


def markdown_link(label: str, url: str) -> str:
    if not re.match(r"(?:https?|mailto):", url):
        return escape(label or url)
    target = "<" + url.replace("&", "&amp;").replace(">", "%3E") + ">"
    label = label.strip()
    return target if not label or label == url else f"{escape(label)} ({target})"


def split(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """Cut ``text`` into messages of at most ``limit`` characters at natural breaks."""
    chunks: list[str] = []
    reopen = False
    budget = limit - 2 * (len(FENCE) + 1)  # room to close and reopen a fence
    while text:
        if reopen:
            text = FENCE + "\n" + text
        if len(text) <= limit and (not reopen or text.count(FENCE) % 2 == 0):
            chunks.append(text)
            break
        cut = best_cut(text, min(budget, len(text)))
        chunk, text = text[:cut].rstrip(), text[cut:].lstrip("\n")
        reopen = chunk.count(FENCE) % 2 == 1
        chunks.append(chunk + ("\n" + FENCE if reopen else ""))
    return [c for c in chunks if c.strip()] or [""]


def best_cut(text: str, limit: int) -> int:
    if len(text) <= limit:
        return len(text)
    for separator in ("\n\n", "\n", " "):
        at = text.rfind(separator, limit // 2, limit)
        if at > 0:
            return at + len(separator)
    return limit


class StreamCleaner:
    """Sanitises streamed text, holding back a tail that may be an unfinished link."""

    def __init__(self) -> None:
        self.tail = ""

    def feed(self, delta: str) -> str:
        text = self.tail + delta
        hold = unfinished_at(text)
        self.tail = text[hold:]
        return undisguise_markdown(text[:hold])

    def flush(self) -> str:
        text, self.tail = self.tail, ""
        return undisguise_markdown(text)


def unfinished_at(text: str) -> int:
    """Where a trailing ``<…`` or ``[…](…`` that is not closed yet begins (or ``len``)."""
    start = max(len(text) - HOLD_LIMIT, 0)
    candidates = []
    angle = text.rfind("<", start)
    if angle >= 0 and OPEN_ANGLE.fullmatch(text, angle):
        candidates.append(angle)
    bracket = text.rfind("[", start)
    if bracket >= 0 and OPEN_LINK.fullmatch(text, bracket):
        candidates.append(bracket)
    return min(candidates) if candidates else len(text)
