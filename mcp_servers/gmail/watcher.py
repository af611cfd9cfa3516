"""New INBOX mail as `event/new_email` notifications, from Gmail's History API.

The position is a Gmail `historyId`, kept on disk with the ids already announced. The
first run only records the mailbox's current history id: mail that was there before the
server ever ran is not news. Each later run lists `messageAdded` history for INBOX since
that id (following pages), announces every message not announced before, and moves the
id forward. Gmail answers 404 when the id is older than the history it keeps (about a
week, or after long downtime); then the watcher re-seeds from the profile's current id and
announces only INBOX mail that arrived since its last successful look (bounded by
`RESYNC_LIMIT`), so a resync never floods the channel with old mail.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ..google.client import GoogleClient
from ..google.errors import GoogleError
from ..google.state import StateFile
from ..kit import Notify, Outbox
from .message import SUMMARY_HEADERS, header, received_at

logger = logging.getLogger(__name__)

EVENT = "event/new_email"
# How many announced ids to remember: enough to cover any overlap between history pages,
# resyncs and restarts, small enough to keep the state file tiny.
ANNOUNCED_KEPT = 1000
HISTORY_PAGE_SIZE = 100
# At most this many messages are announced after a stale-history resync.
RESYNC_LIMIT = 25
# Resync looks back a little before the last successful poll: Gmail's `after:` is coarse
# and clocks differ; the announced-id set removes the overlap.
RESYNC_OVERLAP_SECONDS = 300


class MailWatcher:
    """Polls one mailbox; `poll(notify)` is the kit watcher's body."""

    def __init__(
        self,
        client: GoogleClient,
        state: StateFile,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.client = client
        self.state = state
        self.clock = clock  # dates each successful look, the start of a resync's window

    async def poll(self, notify: Notify) -> int:
        """One look at the mailbox; returns how many messages were announced."""
        state = self.state.load()
        if "history_id" not in state:
            profile = await self.client.call(lambda api: api.users().getProfile(userId="me"))
            self._save(state, history_id=profile["historyId"])
            logger.info("gmail watcher seeded at history id %s", profile["historyId"])
            return 0
        try:
            ids, latest = await self._history_since(state["history_id"])
        except GoogleError as error:
            if error.status != 404:
                raise
            logger.warning("history id %s is too old; resyncing", state["history_id"])
            ids, latest = await self._resync(state)
        outbox = Outbox(notify)
        for message_id in ids:
            if message_id in state.get("announced", []):
                continue
            payload = await self._event(message_id)
            if payload is not None and not await outbox.send(EVENT, payload):
                return outbox.sent  # nobody heard it: keep the position, try again later
            self._save(state, announced_id=message_id)
        self._save(state, history_id=latest)
        return outbox.sent

    async def _history_since(self, history_id: str) -> tuple[list[str], str]:
        """Ids of messages added to INBOX after `history_id`, oldest first, and the new id."""
        ids: list[str] = []
        page_token: str | None = None
        while True:
            response = await self._history_page(history_id, page_token)
            for record in response.get("history", []):
                for added in record.get("messagesAdded", []):
                    message_id = added["message"]["id"]
                    if message_id not in ids:
                        ids.append(message_id)
            page_token = response.get("nextPageToken")
            if not page_token:
                return ids, response["historyId"]

    async def _history_page(self, history_id: str, page_token: str | None) -> dict[str, Any]:
        return await self.client.call(
            lambda api: (
                api.users()
                .history()
                .list(
                    userId="me",
                    startHistoryId=history_id,
                    historyTypes=["messageAdded"],
                    labelId="INBOX",
                    maxResults=HISTORY_PAGE_SIZE,
                    pageToken=page_token,
                )
            )
        )

    async def _resync(self, state: dict[str, Any]) -> tuple[list[str], str]:
        profile = await self.client.call(lambda api: api.users().getProfile(userId="me"))
        since = int(state.get("checked_at", self.clock().timestamp())) - RESYNC_OVERLAP_SECONDS
        listing = await self.client.call(
            lambda api: (
                api.users()
                .messages()
                .list(userId="me", labelIds=["INBOX"], q=f"after:{since}", maxResults=RESYNC_LIMIT)
            )
        )
        ids = [m["id"] for m in listing.get("messages", [])]
        return list(reversed(ids)), profile["historyId"]  # the listing is newest first

    async def _event(self, message_id: str) -> dict[str, Any] | None:
        """The event payload for one message, or None when it is gone or left INBOX."""
        try:
            message = await self.client.call(
                lambda api: (
                    api.users()
                    .messages()
                    .get(
                        userId="me",
                        id=message_id,
                        format="metadata",
                        metadataHeaders=SUMMARY_HEADERS,
                    )
                )
            )
        except GoogleError as error:
            if error.status == 404:
                return None  # deleted between arrival and our look
            raise
        if "INBOX" not in message.get("labelIds", []):
            return None
        return new_email_payload(message)

    def _save(
        self,
        state: dict[str, Any],
        *,
        history_id: str | None = None,
        announced_id: str | None = None,
    ) -> None:
        if history_id is not None:
            state["history_id"] = str(history_id)
            state["checked_at"] = int(self.clock().timestamp())
        if announced_id is not None:
            announced = state.setdefault("announced", [])
            announced.append(announced_id)
            del announced[:-ANNOUNCED_KEPT]
        self.state.save(state)


def new_email_payload(message: dict[str, Any]) -> dict[str, Any]:
    """DESIGN's event payload convention plus the Gmail fields."""
    payload = message.get("payload") or {}
    sender = header(payload, "From")
    subject = header(payload, "Subject") or "(no subject)"
    return {
        "id": message["id"],
        "summary": f"New email from {sender or 'unknown sender'}: {subject}",
        "severity": "info",
        "occurred_at": received_at(message),
        "url": f"https://mail.google.com/mail/u/0/#all/{message['id']}",
        "thread_id": message.get("threadId"),
        "from": sender,
        "to": header(payload, "To"),
        "subject": subject,
        "snippet": message.get("snippet", ""),
        "labels": message.get("labelIds", []),
        "date": header(payload, "Date"),
    }
