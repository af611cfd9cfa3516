"""The fake's Gmail API v1: messages, threads, drafts, labels and the History API.

Messages are stored as raw RFC 822 bytes and rendered on request in Gmail's formats
(`full` MessagePart trees, `metadata` headers, `raw`). Every arrival gets a history id; the
History API answers 404 for a start id older than `oldest_history_id`, as Gmail does once
it no longer keeps that history.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from email import message_from_bytes
from email.message import EmailMessage, Message
from email.utils import format_datetime
from typing import Any

from aiohttp import web

from .wire import ME, b64url, bad_request, not_found, unb64url

# `historyTypes` values and the record fields they select.
HISTORY_FIELDS = {
    "messageAdded": "messagesAdded",
    "messageDeleted": "messagesDeleted",
    "labelAdded": "labelsAdded",
    "labelRemoved": "labelsRemoved",
}
SYSTEM_LABELS = ["INBOX", "UNREAD", "SENT", "DRAFT", "IMPORTANT", "STARRED", "TRASH", "SPAM"]


class GmailFake:
    """Mixin of `FakeGoogle`: Gmail state, routes and test controls."""

    _ids: itertools.count

    def _init_gmail(self) -> None:
        self.messages: dict[str, dict[str, Any]] = {}
        self.raw: dict[str, bytes] = {}
        self.history: list[dict[str, Any]] = []
        self.history_id = 1000
        self.oldest_history_id = 1000
        self.user_labels = [{"id": "Label_1", "name": "Work", "type": "user"}]
        self.sent: list[bytes] = []
        self.drafts: list[dict[str, Any]] = []

    def _gmail_routes(self, app: web.Application) -> None:
        gm = "/gmail/v1/users/{user}"
        app.router.add_get(gm + "/profile", self._profile)
        app.router.add_get(gm + "/messages", self._list_messages)
        app.router.add_post(gm + "/messages/send", self._send)
        app.router.add_get(gm + "/messages/{id}", self._get_message)
        app.router.add_post(gm + "/messages/{id}/modify", self._modify)
        app.router.add_get(gm + "/threads/{id}", self._get_thread)
        app.router.add_post(gm + "/drafts", self._create_draft)
        app.router.add_get(gm + "/labels", self._labels)
        app.router.add_get(gm + "/history", self._history)

    # -- Gmail: test controls ------------------------------------------------------------

    def _next_history(self) -> int:
        self.history_id += 1
        return self.history_id

    def deliver(
        self,
        sender: str,
        subject: str,
        body: str,
        *,
        labels: tuple[str, ...] = ("INBOX", "UNREAD"),
        thread_id: str | None = None,
        attachments: tuple[tuple[str, bytes], ...] = (),
        headers: dict[str, str] | None = None,
        received: datetime | None = None,
    ) -> str:
        """A message arrives (or is imported); returns its id."""
        received = received or datetime.now(UTC)
        msg = EmailMessage()
        msg["From"] = sender
        msg["To"] = ME
        msg["Subject"] = subject
        msg["Date"] = format_datetime(received)
        msg["Message-ID"] = f"<m{next(self._ids)}@mail.example.com>"
        for name, value in (headers or {}).items():
            msg[name] = value
        msg.set_content(body)
        for filename, data in attachments:
            msg.add_attachment(
                data, maintype="application", subtype="octet-stream", filename=filename
            )
        return self._store(msg.as_bytes(), list(labels), thread_id, received)

    def _store(self, raw: bytes, labels: list[str], thread_id: str | None, when: datetime) -> str:
        msg_id = f"{next(self._ids):016x}"
        history_id = self._next_history()
        parsed = message_from_bytes(raw)
        text = _first_text(parsed)
        self.raw[msg_id] = raw
        self.messages[msg_id] = {
            "id": msg_id,
            "threadId": thread_id or msg_id,
            "labelIds": labels,
            "snippet": " ".join(text.split())[:100],
            "historyId": str(history_id),
            "internalDate": str(int(when.timestamp() * 1000)),
            "sizeEstimate": len(raw),
        }
        ref = {"id": msg_id, "threadId": thread_id or msg_id}
        self.history.append(
            {
                "id": str(history_id),
                "messages": [ref],
                "messagesAdded": [{"message": {**ref, "labelIds": list(labels)}}],
                "_labels": list(labels),
            }
        )
        return msg_id

    def expire_history(self) -> None:
        """Gmail keeps history for a limited time: make every id seen so far too old."""
        self.oldest_history_id = self._next_history()

    # -- Gmail: handlers -----------------------------------------------------------------

    async def _profile(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "emailAddress": ME,
                "messagesTotal": len(self.messages),
                "threadsTotal": len({m["threadId"] for m in self.messages.values()}),
                "historyId": str(self.history_id),
            }
        )

    def _matches(self, msg: dict[str, Any], query: str) -> bool:
        parsed = message_from_bytes(self.raw[msg["id"]])
        haystack = f"{parsed['From']} {parsed['Subject']} {_first_text(parsed)}".lower()
        for term in query.split():
            key, _, value = term.partition(":")
            if value and key == "is":
                if value == "unread" and "UNREAD" not in msg["labelIds"]:
                    return False
            elif value and key == "from":
                if value.lower() not in str(parsed["From"]).lower():
                    return False
            elif value and key == "after":
                if int(msg["internalDate"]) // 1000 <= int(value):
                    return False
            elif value and key in ("in", "label"):
                if value.upper() not in msg["labelIds"]:
                    return False
            elif term.lower() not in haystack:
                return False
        return True

    async def _list_messages(self, request: web.Request) -> web.Response:
        q = request.query
        labels = q.getall("labelIds", [])
        found = [
            m
            for m in sorted(self.messages.values(), key=lambda m: -int(m["internalDate"]))
            if all(label in m["labelIds"] for label in labels) and self._matches(m, q.get("q", ""))
        ]
        start = int(q.get("pageToken", "0"))
        size = int(q.get("maxResults", "100"))
        page = found[start : start + size]
        body: dict[str, Any] = {"resultSizeEstimate": len(found)}
        if page:
            body["messages"] = [{"id": m["id"], "threadId": m["threadId"]} for m in page]
        if start + size < len(found):
            body["nextPageToken"] = str(start + size)
        return web.json_response(body)

    def _render(self, msg_id: str, fmt: str, wanted: list[str]) -> dict[str, Any]:
        msg = dict(self.messages[msg_id])
        raw = self.raw[msg_id]
        if fmt == "raw":
            msg["raw"] = b64url(raw)
        elif fmt == "metadata":
            parsed = message_from_bytes(raw)
            names = {w.lower() for w in wanted}
            headers = [
                {"name": k, "value": str(v)}
                for k, v in parsed.items()
                if not names or k.lower() in names
            ]
            msg["payload"] = {"mimeType": parsed.get_content_type(), "headers": headers}
        elif fmt == "full":
            msg["payload"] = _payload(message_from_bytes(raw), "", msg_id)
        return msg

    async def _get_message(self, request: web.Request) -> web.Response:
        msg_id = request.match_info["id"]
        if msg_id not in self.messages:
            return not_found()
        q = request.query
        fmt = q.get("format", "full")
        return web.json_response(self._render(msg_id, fmt, q.getall("metadataHeaders", [])))

    async def _get_thread(self, request: web.Request) -> web.Response:
        thread_id = request.match_info["id"]
        members = [m for m in self.messages.values() if m["threadId"] == thread_id]
        if not members:
            return not_found()
        q = request.query
        fmt, wanted = q.get("format", "full"), q.getall("metadataHeaders", [])
        rendered = [self._render(m["id"], fmt, wanted) for m in members]
        history = max(int(m["historyId"]) for m in members)
        return web.json_response({"id": thread_id, "historyId": str(history), "messages": rendered})

    async def _send(self, request: web.Request) -> web.Response:
        body = await request.json()
        if "raw" not in body:
            return bad_request(
                "'raw' RFC822 payload message string or uploading message via /upload/* URL"
            )
        raw = unb64url(body["raw"])
        self.sent.append(raw)
        msg_id = self._store(raw, ["SENT"], body.get("threadId"), datetime.now(UTC))
        return web.json_response(
            {"id": msg_id, "threadId": self.messages[msg_id]["threadId"], "labelIds": ["SENT"]}
        )

    async def _create_draft(self, request: web.Request) -> web.Response:
        body = await request.json()
        message = body.get("message") or {}
        if "raw" not in message:
            return bad_request("Missing draft message")
        raw = unb64url(message["raw"])
        msg_id = self._store(raw, ["DRAFT"], message.get("threadId"), datetime.now(UTC))
        draft = {
            "id": f"r{next(self._ids)}",
            "message": {
                "id": msg_id,
                "threadId": self.messages[msg_id]["threadId"],
                "labelIds": ["DRAFT"],
            },
        }
        self.drafts.append(draft)
        return web.json_response(draft)

    async def _modify(self, request: web.Request) -> web.Response:
        msg_id = request.match_info["id"]
        if msg_id not in self.messages:
            return not_found()
        body = await request.json()
        known = set(SYSTEM_LABELS) | {label["id"] for label in self.user_labels}
        for label in body.get("addLabelIds", []) + body.get("removeLabelIds", []):
            if label not in known:
                return bad_request(f"Invalid label: {label}")
        msg = self.messages[msg_id]
        labels = [x for x in msg["labelIds"] if x not in body.get("removeLabelIds", [])]
        labels += [x for x in body.get("addLabelIds", []) if x not in labels]
        msg["labelIds"] = labels
        msg["historyId"] = str(self._next_history())
        return web.json_response({"id": msg_id, "threadId": msg["threadId"], "labelIds": labels})

    async def _labels(self, request: web.Request) -> web.Response:
        system = [{"id": x, "name": x, "type": "system"} for x in SYSTEM_LABELS]
        return web.json_response({"labels": system + self.user_labels})

    async def _history(self, request: web.Request) -> web.Response:
        q = request.query
        if "startHistoryId" not in q:
            return bad_request("Missing startHistoryId")
        start_id = int(q["startHistoryId"])
        if start_id < self.oldest_history_id:
            return not_found()
        types = q.getall("historyTypes", [])
        label = q.get("labelId")
        records = []
        for record in self.history:
            if int(record["id"]) <= start_id:
                continue
            if label and label not in record["_labels"]:
                continue
            if types and not any(HISTORY_FIELDS.get(t) in record for t in types):
                continue
            records.append({k: v for k, v in record.items() if not k.startswith("_")})
        offset = int(q.get("pageToken", "0"))
        size = int(q.get("maxResults", "100"))
        body: dict[str, Any] = {"historyId": str(self.history_id)}
        if records[offset : offset + size]:
            body["history"] = records[offset : offset + size]
        if offset + size < len(records):
            body["nextPageToken"] = str(offset + size)
        return web.json_response(body)


def _first_text(msg: Message) -> str:
    for part in msg.walk():
        if part.get_content_type() == "text/plain" and not part.get_filename():
            data = part.get_payload(decode=True) or b""
            return data.decode(part.get_content_charset() or "utf-8", "replace")
    return ""


def _payload(msg: Message, part_id: str, msg_id: str) -> dict[str, Any]:
    """Gmail's `format=full` MessagePart tree: top part id "", children "0", "1", "1.0"…"""
    part: dict[str, Any] = {
        "partId": part_id,
        "mimeType": msg.get_content_type(),
        "filename": msg.get_filename() or "",
        "headers": [{"name": k, "value": str(v)} for k, v in msg.items()],
    }
    if msg.is_multipart():
        part["body"] = {"size": 0}
        part["parts"] = [
            _payload(child, f"{part_id}.{i}" if part_id else str(i), msg_id)
            for i, child in enumerate(msg.get_payload())
        ]
        return part
    data = msg.get_payload(decode=True) or b""
    if part["filename"]:
        part["body"] = {"size": len(data), "attachmentId": f"att-{msg_id}-{part_id}"}
    else:
        part["body"] = {"size": len(data), "data": b64url(data)}
    return part


def parse_sent(raw: bytes) -> Message:
    """A message the server sent, parsed (for assertions on headers and body)."""
    return message_from_bytes(raw)
