"""The gmail server's tools: reading, searching, labelling, drafting and sending mail.

Each public coroutine of `GmailTools` is one MCP tool (name, docstring and type hints are
its definition); `server.py` registers them with their capabilities. Every Google request
goes through `GoogleClient.call`, so failures arrive here as `GoogleError`, which is
already a tool error the model can read.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..google.client import GoogleClient
from ..google.errors import GoogleError
from .message import SUMMARY_HEADERS, compose, read_message, reply_recipients, summary_of

MAX_SEARCH_RESULTS = 100
# Parallel metadata fetches for one search page; Gmail's per-user quota tolerates a few.
FETCH_CONCURRENCY = 5
THREAD_HEADERS = ["From", "To", "Cc", "Subject", "Date", "Message-ID", "References", "Reply-To"]


class GmailTools:
    """The tools, bound to one mailbox (`userId="me"` of the stored token)."""

    def __init__(self, client: GoogleClient) -> None:
        self.client = client
        self._labels: dict[str, str] | None = None

    def _messages(self, api):
        return api.users().messages()

    async def search(
        self, query: str = "", max_results: int = 20, page_token: str | None = None
    ) -> dict[str, Any]:
        """Search the mailbox with Gmail's query syntax; newest first, paged.

        Args:
            query: Gmail search, e.g. "from:ana@corp.com is:unread newer_than:7d". Empty = all.
            max_results: Messages per page (1-100).
            page_token: `next_page_token` of the previous page.
        """
        size = max(1, min(max_results, MAX_SEARCH_RESULTS))
        listing = await self.client.call(
            lambda api: self._messages(api).list(
                userId="me", q=query or None, maxResults=size, pageToken=page_token
            )
        )
        ids = [m["id"] for m in listing.get("messages", [])]
        gate = asyncio.Semaphore(FETCH_CONCURRENCY)

        async def fetch(message_id: str) -> dict[str, Any]:
            async with gate:
                return await self.client.call(
                    lambda api: self._messages(api).get(
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

    async def get_message(self, message_id: str) -> dict[str, Any]:
        """One message: headers, plain-text body and the attachments it carries (listed only).

        Args:
            message_id: The message id (from search or an event/new_email notification).
        """
        message = await self.client.call(
            lambda api: self._messages(api).get(userId="me", id=message_id, format="full")
        )
        return read_message(message)

    async def get_thread(self, thread_id: str) -> dict[str, Any]:
        """A whole conversation, oldest message first, each with headers and body.

        Args:
            thread_id: The thread id (`thread_id` of a message).
        """
        thread = await self.client.call(
            lambda api: api.users().threads().get(userId="me", id=thread_id, format="full")
        )
        messages = [read_message(m) for m in thread.get("messages", [])]
        return {"id": thread["id"], "messages": messages}

    async def send(
        self,
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
        message = await self._compose(body, to, subject, cc, reply_to_message_id)
        sent = await self.client.call(
            lambda api: self._messages(api).send(userId="me", body=message)
        )
        return {"id": sent["id"], "thread_id": sent.get("threadId"), "labels": sent.get("labelIds")}

    async def create_draft(
        self,
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
        message = await self._compose(body, to, subject, cc, reply_to_message_id)
        draft = await self.client.call(
            lambda api: api.users().drafts().create(userId="me", body={"message": message})
        )
        inner = draft.get("message", {})
        return {
            "draft_id": draft["id"],
            "message_id": inner.get("id"),
            "thread_id": inner.get("threadId"),
        }

    async def _compose(self, body, to, subject, cc, reply_to_message_id) -> dict[str, Any]:
        """The API's message body: the raw MIME text, and the thread when it is a reply."""
        original = None
        if reply_to_message_id:
            original = await self.client.call(
                lambda api: self._messages(api).get(
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

    async def modify_labels(
        self, message_id: str, add: list[str] | None = None, remove: list[str] | None = None
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
            "addLabelIds": [await self._label_id(x) for x in add or []],
            "removeLabelIds": [await self._label_id(x) for x in remove or []],
        }
        result = await self.client.call(
            lambda api: self._messages(api).modify(userId="me", id=message_id, body=body)
        )
        return {"id": result["id"], "labels": result.get("labelIds", [])}

    async def mark_read(self, message_id: str, read: bool = True) -> dict[str, Any]:
        """Mark a message read (or unread again with read=false).

        Args:
            message_id: The message id.
            read: True to mark read, false to mark unread.
        """
        change = {"removeLabelIds": ["UNREAD"]} if read else {"addLabelIds": ["UNREAD"]}
        result = await self.client.call(
            lambda api: self._messages(api).modify(userId="me", id=message_id, body=change)
        )
        return {"id": result["id"], "labels": result.get("labelIds", [])}

    async def list_labels(self) -> dict[str, Any]:
        """All labels of the mailbox: system ones (INBOX, UNREAD, …) and the user's own."""
        response = await self.client.call(lambda api: api.users().labels().list(userId="me"))
        labels = [
            {"id": x["id"], "name": x["name"], "type": x.get("type", "user")}
            for x in response.get("labels", [])
        ]
        self._labels = {x["name"].lower(): x["id"] for x in labels}
        return {"labels": labels}

    async def _label_id(self, name_or_id: str) -> str:
        """Accept a label's name as readily as its id (models know names, Gmail wants ids)."""
        labels = self._labels or {}
        if name_or_id not in labels.values() and name_or_id.lower() not in labels:
            await self.list_labels()  # unknown here: maybe created since the last listing
            labels = self._labels or {}
        if name_or_id in labels.values():
            return name_or_id
        if name_or_id.lower() in labels:
            return labels[name_or_id.lower()]
        raise GoogleError(f"No label {name_or_id!r}; list_labels shows the ones that exist.")
