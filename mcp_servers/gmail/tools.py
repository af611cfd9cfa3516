"""The gmail server's tools: reading, searching, labelling, drafting and sending mail.

`register(server, client)` declares each tool with `@server.tool`: its capabilities and
annotations above it, its name, docstring and type hints as its definition. Capabilities
follow DESIGN: whatever returns mail is private and untrusted (anyone can write to the
user), `send` lets the model choose the recipient (egress `chosen`), and nothing here
deletes mail. Every Google request goes through `GoogleClient.call`, so failures arrive
here as `GoogleError`, which is already a tool error the model can read.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..google.client import GoogleClient
from ..google.errors import GoogleError
from ..kit import Server
from .message import SUMMARY_HEADERS, compose, read_message, reply_recipients, summary_of

READ_MAIL = {"private": True, "untrusted": True, "egress": "none", "destructive": False}
READ_OWN = {"private": True, "untrusted": False, "egress": "none", "destructive": False}
CHANGE_OWN = {"private": False, "untrusted": False, "egress": "none", "destructive": False}
SEND = {"private": False, "untrusted": False, "egress": "chosen", "destructive": False}

READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}
LABELS = {
    "readOnlyHint": False,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}
DRAFT = {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}
SENDING = {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": True}
# Every tool answers with a JSON object; declaring that gives clients `structuredContent`.
OBJECT = {"type": "object"}

MAX_SEARCH_RESULTS = 100
# Parallel metadata fetches for one search page; Gmail's per-user quota tolerates a few.
FETCH_CONCURRENCY = 5
THREAD_HEADERS = ["From", "To", "Cc", "Subject", "Date", "Message-ID", "References", "Reply-To"]


def register(server: Server, client: GoogleClient) -> None:
    """Declare the mail tools on `server`, for the mailbox of `client`'s token (`userId="me"`)."""
    # Label names to ids, as of the last list_labels (models know names, Gmail wants ids).
    labels_by_name: dict[str, str] = {}

    @server.tool(capabilities=READ_MAIL, annotations=READ_ONLY, output_schema=OBJECT)
    async def search(
        query: str = "", max_results: int = 20, page_token: str | None = None
    ) -> dict[str, Any]:
        """Search the mailbox with Gmail's query syntax; newest first, paged.

        Args:
            query: Gmail search, e.g. "from:ana@corp.com is:unread newer_than:7d". Empty = all.
            max_results: Messages per page (1-100).
            page_token: `next_page_token` of the previous page.
        """
        size = max(1, min(max_results, MAX_SEARCH_RESULTS))
        listing = await client.call(
            lambda api: _messages(api).list(
                userId="me", q=query or None, maxResults=size, pageToken=page_token
            )
        )
        ids = [m["id"] for m in listing.get("messages", [])]
        gate = asyncio.Semaphore(FETCH_CONCURRENCY)

        async def fetch(message_id: str) -> dict[str, Any]:
            async with gate:
                return await client.call(
                    lambda api: _messages(api).get(
                        userId="me",
                        id=message_id,
                        format="metadata",
                        metadataHeaders=SUMMARY_HEADERS,
                    )
                )

        messages = await asyncio.gather(*(fetch(i) for i in ids))
        return {
            "messages": [summary_of(m) for m in messages],
            "next_page_token": listing.get("nextPageToken"),
            "result_size_estimate": listing.get("resultSizeEstimate", len(ids)),
        }

    @server.tool(capabilities=READ_MAIL, annotations=READ_ONLY, output_schema=OBJECT)
    async def get_message(message_id: str) -> dict[str, Any]:
        """One message: headers, plain-text body and the attachments it carries (listed only).

        Args:
            message_id: The message id (from search or an event/new_email notification).
        """
        message = await client.call(
            lambda api: _messages(api).get(userId="me", id=message_id, format="full")
        )
        return read_message(message)

    @server.tool(capabilities=READ_MAIL, annotations=READ_ONLY, output_schema=OBJECT)
    async def get_thread(thread_id: str) -> dict[str, Any]:
        """A whole conversation, oldest message first, each with headers and body.

        Args:
            thread_id: The thread id (`thread_id` of a message).
        """
        thread = await client.call(
            lambda api: api.users().threads().get(userId="me", id=thread_id, format="full")
        )
        messages = [read_message(m) for m in thread.get("messages", [])]
        return {"id": thread["id"], "messages": messages}

    @server.tool(capabilities=SEND, annotations=SENDING, output_schema=OBJECT)
    async def send(
        body: str,
        to: list[str] | None = None,
        subject: str = "",
        cc: list[str] | None = None,
        reply_to_message_id: str | None = None,
    ) -> dict[str, Any]:
        """Send an email now. To reply, give reply_to_message_id: the reply stays in that thread.

        Args:
            body: Plain-text body.
            to: Recipient addresses; a reply defaults to the original sender.
            subject: Subject; a reply defaults to "Re: <original subject>".
            cc: Copy recipients.
            reply_to_message_id: The message this answers.
        """
        message = await _compose(client, body, to, subject, cc, reply_to_message_id)
        sent = await client.call(lambda api: _messages(api).send(userId="me", body=message))
        return {"id": sent["id"], "thread_id": sent.get("threadId"), "labels": sent.get("labelIds")}

    @server.tool(capabilities=CHANGE_OWN, annotations=DRAFT, output_schema=OBJECT)
    async def create_draft(
        body: str,
        to: list[str] | None = None,
        subject: str = "",
        cc: list[str] | None = None,
        reply_to_message_id: str | None = None,
    ) -> dict[str, Any]:
        """Save an email as a draft (nothing is sent); replies are threaded like `send`.

        Args:
            body: Plain-text body.
            to: Recipient addresses; a reply defaults to the original sender.
            subject: Subject; a reply defaults to "Re: <original subject>".
            cc: Copy recipients.
            reply_to_message_id: The message this answers.
        """
        message = await _compose(client, body, to, subject, cc, reply_to_message_id)
        draft = await client.call(
            lambda api: api.users().drafts().create(userId="me", body={"message": message})
        )
        inner = draft.get("message", {})
        return {
            "draft_id": draft["id"],
            "message_id": inner.get("id"),
            "thread_id": inner.get("threadId"),
        }

    @server.tool(capabilities=CHANGE_OWN, annotations=LABELS, output_schema=OBJECT)
    async def modify_labels(
        message_id: str, add: list[str] | None = None, remove: list[str] | None = None
    ) -> dict[str, Any]:
        """Add or remove labels on a message (names or ids; e.g. remove INBOX to archive).

        Args:
            message_id: The message id.
            add: Labels to add.
            remove: Labels to remove.
        """
        if not add and not remove:
            raise GoogleError("Give labels to `add` or `remove`.")
        body = {
            "addLabelIds": [await label_id(x) for x in add or []],
            "removeLabelIds": [await label_id(x) for x in remove or []],
        }
        result = await client.call(
            lambda api: _messages(api).modify(userId="me", id=message_id, body=body)
        )
        return {"id": result["id"], "labels": result.get("labelIds", [])}

    @server.tool(capabilities=CHANGE_OWN, annotations=LABELS, output_schema=OBJECT)
    async def mark_read(message_id: str, read: bool = True) -> dict[str, Any]:
        """Mark a message read (or unread again with read=false).

        Args:
            message_id: The message id.
            read: True to mark read, false to mark unread.
        """
        change = {"removeLabelIds": ["UNREAD"]} if read else {"addLabelIds": ["UNREAD"]}
        result = await client.call(
            lambda api: _messages(api).modify(userId="me", id=message_id, body=change)
        )
        return {"id": result["id"], "labels": result.get("labelIds", [])}

    @server.tool(capabilities=READ_OWN, annotations=READ_ONLY, output_schema=OBJECT)
    async def list_labels() -> dict[str, Any]:
        """All labels of the mailbox: system ones (INBOX, UNREAD, …) and the user's own."""
        response = await client.call(lambda api: api.users().labels().list(userId="me"))
        labels = [
            {"id": x["id"], "name": x["name"], "type": x.get("type", "user")}
            for x in response.get("labels", [])
        ]
        labels_by_name.clear()
        labels_by_name.update({x["name"].lower(): x["id"] for x in labels})
        return {"labels": labels}

    async def label_id(name_or_id: str) -> str:
        """Accept a label's name as readily as its id (models know names, Gmail wants ids)."""
        known = labels_by_name
        if name_or_id not in known.values() and name_or_id.lower() not in known:
            await list_labels()  # unknown here: maybe created since the last listing
        if name_or_id in known.values():
            return name_or_id
        if name_or_id.lower() in known:
            return known[name_or_id.lower()]
        raise GoogleError(f"No label {name_or_id!r}; list_labels shows the ones that exist.")


def _messages(api: Any) -> Any:
    return api.users().messages()


async def _compose(
    client: GoogleClient,
    body: str,
    to: list[str] | None,
    subject: str,
    cc: list[str] | None,
    reply_to_message_id: str | None,
) -> dict[str, Any]:
    """The API's message body: the raw MIME text, and the thread when it is a reply."""
    original = None
    if reply_to_message_id:
        original = await client.call(
            lambda api: _messages(api).get(
                userId="me",
                id=reply_to_message_id,
                format="metadata",
                metadataHeaders=THREAD_HEADERS,
            )
        )
        to = to or reply_recipients(original)
    if not to:
        raise GoogleError("Give at least one recipient in `to`.")
    if not subject and original is None:
        raise GoogleError("Give a subject (only replies may leave it out).")
    raw = compose(
        sender=None,
        to=list(to),
        cc=list(cc or []),
        subject=subject,
        body=body,
        reply_to=original,
    )
    message: dict[str, Any] = {"raw": raw}
    if original is not None and original.get("threadId"):
        message["threadId"] = original["threadId"]
    return message
