"""Gmail's message resources in and out: reading a MessagePart tree, writing RFC 822 mail.

Reading turns Gmail's `format=full` payload into what a model can use — the main headers,
one plain-text body (the text/plain part, else the HTML part reduced to text), and the
attachments listed by name, type and size but never inlined. Writing builds the MIME
message for `send` and `create_draft`, with the threading headers a reply needs
(`In-Reply-To`, `References`, a "Re:" subject) so the reply lands in the same conversation
for every participant, not only in our own mailbox.
"""

from __future__ import annotations

import base64
import re
from datetime import UTC, datetime
from email.message import EmailMessage
from html.parser import HTMLParser
from typing import Any

# The body the model sees is cut here; get_thread on long threads would otherwise flood it.
MAX_BODY_CHARS = 20_000
HEADERS_SHOWN = ("From", "To", "Cc", "Subject", "Date", "Reply-To", "Message-ID")
# Headers fetched for listings and events (format=metadata keeps responses small).
SUMMARY_HEADERS = ["From", "To", "Subject", "Date"]


def header_map(payload: dict[str, Any]) -> dict[str, str]:
    """Gmail's [{name, value}] header list as a dict (first occurrence, case as Gmail sent)."""
    found: dict[str, str] = {}
    lowered: set[str] = set()
    for item in payload.get("headers") or []:
        name = item.get("name", "")
        if name.lower() not in lowered:
            lowered.add(name.lower())
            found[name] = item.get("value", "")
    return found


def header(payload: dict[str, Any], name: str) -> str:
    for key, value in header_map(payload).items():
        if key.lower() == name.lower():
            return value
    return ""


def received_at(message: dict[str, Any]) -> str:
    """`internalDate` (ms since the epoch, as Gmail stores arrival) as ISO 8601 UTC."""
    millis = int(message.get("internalDate") or 0)
    return datetime.fromtimestamp(millis / 1000, UTC).isoformat().replace("+00:00", "Z")


def summary_of(message: dict[str, Any]) -> dict[str, Any]:
    """One line of a listing, from a `format=metadata` message."""
    payload = message.get("payload") or {}
    return {
        "id": message["id"],
        "thread_id": message.get("threadId"),
        "from": header(payload, "From"),
        "to": header(payload, "To"),
        "subject": header(payload, "Subject"),
        "date": header(payload, "Date"),
        "snippet": message.get("snippet", ""),
        "labels": message.get("labelIds", []),
    }


def read_message(message: dict[str, Any]) -> dict[str, Any]:
    """A `format=full` message as headers, plain-text body and attachment list."""
    payload = message.get("payload") or {}
    headers = {k.lower(): v for k, v in header_map(payload).items()}
    plain: list[str] = []
    html: list[str] = []
    attachments: list[dict[str, Any]] = []
    _walk(payload, plain, html, attachments)
    body = "\n".join(plain) if plain else html_to_text("\n".join(html))
    truncated = len(body) > MAX_BODY_CHARS
    return {
        "id": message["id"],
        "thread_id": message.get("threadId"),
        "labels": message.get("labelIds", []),
        "headers": {
            name: headers[name.lower()] for name in HEADERS_SHOWN if name.lower() in headers
        },
        "received_at": received_at(message),
        "body": body[:MAX_BODY_CHARS] + ("\n[… body truncated]" if truncated else ""),
        "attachments": attachments,
    }


def _walk(part: dict[str, Any], plain: list[str], html: list[str], files: list[dict]) -> None:
    mime = part.get("mimeType", "")
    body = part.get("body") or {}
    if part.get("filename"):
        files.append(
            {
                "filename": part["filename"],
                "mime_type": mime,
                "size": body.get("size", 0),
                "attachment_id": body.get("attachmentId"),
            }
        )
    elif mime == "text/plain" and "data" in body:
        plain.append(_decode(body["data"]))
    elif mime == "text/html" and "data" in body:
        html.append(_decode(body["data"]))
    for child in part.get("parts") or []:
        _walk(child, plain, html, files)


def _decode(data: str) -> str:
    raw = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
    return raw.decode("utf-8", "replace")


class _TextExtractor(HTMLParser):
    """Keeps text, turns block elements into line breaks, drops script and style."""

    BLOCKS = {"p", "div", "br", "tr", "li", "h1", "h2", "h3", "h4", "table", "blockquote"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    extractor = _TextExtractor()
    extractor.feed(html)
    text = "".join(extractor.parts)
    lines = (re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in text.splitlines())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def compose(
    *,
    sender: str | None,
    to: list[str],
    cc: list[str],
    subject: str,
    body: str,
    reply_to: dict[str, Any] | None = None,
) -> str:
    """The base64url RFC 822 message Gmail's `send` and `drafts.create` take as `raw`.

    `reply_to` is the original message (format=metadata with Message-ID and References);
    its ids go into In-Reply-To / References so every mail client threads the reply.
    """
    msg = EmailMessage()
    if sender:
        msg["From"] = sender
    if to:
        msg["To"] = ", ".join(to)
    if cc:
        msg["Cc"] = ", ".join(cc)
    if reply_to is not None:
        payload = reply_to.get("payload") or {}
        original_id = header(payload, "Message-ID")
        if original_id:
            references = header(payload, "References").split()
            msg["In-Reply-To"] = original_id
            msg["References"] = " ".join([*references, original_id])
        original_subject = header(payload, "Subject")
        if not subject:
            has_prefix = original_subject.lower().startswith("re:")
            subject = original_subject if has_prefix else f"Re: {original_subject}"
    msg["Subject"] = subject
    msg.set_content(body)
    return base64.urlsafe_b64encode(msg.as_bytes()).decode()


def reply_recipients(original: dict[str, Any]) -> list[str]:
    """Who a reply goes to by default: Reply-To if the sender set one, else From."""
    payload = original.get("payload") or {}
    target = header(payload, "Reply-To") or header(payload, "From")
    return [target] if target else []
