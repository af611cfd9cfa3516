"""A fake of Google's OAuth token endpoint, Gmail API v1 and Calendar API v3 on 127.0.0.1.

It speaks the real wire format closely enough for `google-api-python-client`, `google-auth`
and `google-auth-oauthlib`: JSON error bodies `{"error": {"code", "message", "errors"}}`,
401 for a missing or expired bearer token, Gmail's 404 for a history id older than what it
keeps, Calendar's 410 `fullSyncRequired` for a sync token it no longer honours, and the
authorization-code + refresh-token grants with a redirect back to the loopback server.
Tests drive it with plain methods (`deliver`, `add_event`, `expire_history`, …).
"""

from __future__ import annotations

import base64
import itertools
import time
from datetime import UTC, datetime, timedelta
from email import message_from_bytes
from email.message import EmailMessage, Message
from email.utils import format_datetime
from typing import Any
from urllib.parse import unquote, urlencode
from zoneinfo import ZoneInfo

from aiohttp import web

ME = "me@example.com"
CLIENT_ID = "fake-client.apps.googleusercontent.com"
CLIENT_SECRET = "fake-client-secret"
ACCESS_TOKEN_SECONDS = 3600
# `historyTypes` values and the record fields they select.
HISTORY_FIELDS = {
    "messageAdded": "messagesAdded",
    "messageDeleted": "messagesDeleted",
    "labelAdded": "labelsAdded",
    "labelRemoved": "labelsRemoved",
}
# Which scopes open which API (every Gmail scope names "mail", every Calendar one "calendar").
API_SCOPE_MARK = {"gmail": "mail", "calendar": "calendar"}
SYSTEM_LABELS = ["INBOX", "UNREAD", "SENT", "DRAFT", "IMPORTANT", "STARRED", "TRASH", "SPAM"]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def google_error(code: int, message: str, reason: str, status: str) -> web.Response:
    body = {
        "error": {
            "code": code,
            "message": message,
            "errors": [{"message": message, "domain": "global", "reason": reason}],
            "status": status,
        }
    }
    return web.json_response(body, status=code)


def not_found() -> web.Response:
    return google_error(404, "Requested entity was not found.", "notFound", "NOT_FOUND")


def bad_request(message: str) -> web.Response:
    return google_error(400, message, "invalid", "INVALID_ARGUMENT")


class FakeGoogle:
    """The fake's state and its aiohttp application."""

    def __init__(self) -> None:
        self.url = ""
        self._runner: web.AppRunner | None = None
        self._ids = itertools.count(1)
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        # OAuth
        self.codes: dict[str, list[str]] = {}
        self.refresh_tokens: dict[str, list[str]] = {}
        self.access_tokens: dict[str, float] = {}
        self.token_scopes: dict[str, list[str]] = {}
        self.refresh_count = 0
        # Gmail
        self.messages: dict[str, dict[str, Any]] = {}
        self.raw: dict[str, bytes] = {}
        self.history: list[dict[str, Any]] = []
        self.history_id = 1000
        self.oldest_history_id = 1000
        self.user_labels = [{"id": "Label_1", "name": "Work", "type": "user"}]
        self.sent: list[bytes] = []
        self.drafts: list[dict[str, Any]] = []
        # Calendar
        self.calendars = [
            {"id": ME, "summary": ME, "primary": True, "timeZone": "Europe/Zurich"},
            {"id": "team@group.calendar.google.com", "summary": "Team", "timeZone": "UTC"},
        ]
        self.events: dict[str, dict[str, dict[str, Any]]] = {c["id"]: {} for c in self.calendars}
        self.seq = 0
        self.min_sync_seq = 0

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self) -> str:
        app = web.Application(middlewares=[self._middleware])
        app.router.add_get("/o/oauth2/auth", self._authorize)
        app.router.add_post("/token", self._token)
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
        cal = "/calendar/v3"
        app.router.add_get(cal + "/users/me/calendarList", self._calendar_list)
        app.router.add_get(cal + "/calendars/{cal}/events", self._list_events)
        app.router.add_post(cal + "/calendars/{cal}/events", self._insert_event)
        app.router.add_get(cal + "/calendars/{cal}/events/{id}", self._get_event)
        app.router.add_patch(cal + "/calendars/{cal}/events/{id}", self._patch_event)
        app.router.add_delete(cal + "/calendars/{cal}/events/{id}", self._delete_event)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def close(self) -> None:
        if self._runner:
            await self._runner.cleanup()

    @web.middleware
    async def _middleware(self, request: web.Request, handler):
        self.requests.append((request.method, request.path, dict(request.query)))
        if request.path.startswith(("/gmail/", "/calendar/")):
            header = request.headers.get("Authorization", "")
            token = header.removeprefix("Bearer ")
            if self.access_tokens.get(token, 0) < time.time():
                response = google_error(
                    401,
                    "Request had invalid authentication credentials.",
                    "authError",
                    "UNAUTHENTICATED",
                )
                response.headers["WWW-Authenticate"] = 'Bearer realm="https://accounts.google.com/"'
                return response
            api = request.path.split("/")[1]
            if not any(API_SCOPE_MARK[api] in scope for scope in self.token_scopes[token]):
                return google_error(
                    403,
                    "Request had insufficient authentication scopes.",
                    "insufficientPermissions",
                    "PERMISSION_DENIED",
                )
        return await handler(request)

    def count(self, method: str, path_end: str) -> int:
        return sum(1 for m, p, _ in self.requests if m == method and p.endswith(path_end))

    # -- OAuth ---------------------------------------------------------------------------

    def client_secrets(self) -> dict[str, Any]:
        """The 'Desktop app' client file Google Cloud Console lets you download."""
        return {
            "installed": {
                "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET,
                "project_id": "fake-project",
                "auth_uri": f"{self.url}/o/oauth2/auth",
                "token_uri": f"{self.url}/token",
                "redirect_uris": ["http://localhost"],
            }
        }

    def authorized_user(self, scopes: list[str]) -> dict[str, Any]:
        """A token file as `auth` writes it, with an access token that has already expired."""
        refresh = f"refresh-{next(self._ids)}"
        self.refresh_tokens[refresh] = scopes
        return {
            "token": "expired-access-token",
            "refresh_token": refresh,
            "token_uri": f"{self.url}/token",
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "scopes": scopes,
            "expiry": "2020-01-01T00:00:00Z",
        }

    def revoke_all(self) -> None:
        self.refresh_tokens.clear()
        self.access_tokens.clear()

    def expire_access_tokens(self) -> None:
        self.access_tokens.clear()

    def _issue(self, scopes: list[str]) -> dict[str, Any]:
        token = f"access-{next(self._ids)}"
        self.access_tokens[token] = time.time() + ACCESS_TOKEN_SECONDS
        self.token_scopes[token] = scopes
        return {
            "access_token": token,
            "expires_in": ACCESS_TOKEN_SECONDS,
            "scope": " ".join(scopes),
            "token_type": "Bearer",
        }

    async def _authorize(self, request: web.Request) -> web.Response:
        q = request.query
        redirect = q.get("redirect_uri", "")
        if q.get("client_id") != CLIENT_ID or q.get("response_type") != "code":
            return web.Response(status=400, text="invalid_request")
        if not redirect.startswith(("http://localhost:", "http://127.0.0.1:")):
            return web.Response(status=400, text="redirect_uri_mismatch")
        code = f"code-{next(self._ids)}"
        self.codes[code] = q.get("scope", "").split()
        params = {"state": q.get("state", ""), "code": code, "scope": q.get("scope", "")}
        raise web.HTTPFound(f"{redirect}?{urlencode(params)}")

    async def _token(self, request: web.Request) -> web.Response:
        form = await request.post()
        client = (form.get("client_id"), form.get("client_secret"))
        if request.headers.get("Authorization", "").startswith("Basic "):
            # RFC 6749 2.3.1: the client may authenticate with HTTP Basic instead of the form.
            pair = base64.b64decode(request.headers["Authorization"][6:]).decode()
            client = tuple(unquote(x) for x in pair.split(":", 1))
        if client != (CLIENT_ID, CLIENT_SECRET):
            return web.json_response({"error": "invalid_client"}, status=401)
        grant = form.get("grant_type")
        if grant == "authorization_code":
            scopes = self.codes.pop(str(form.get("code")), None)
            if scopes is None:
                return web.json_response({"error": "invalid_grant"}, status=400)
            refresh = f"refresh-{next(self._ids)}"
            self.refresh_tokens[refresh] = scopes
            return web.json_response({**self._issue(scopes), "refresh_token": refresh})
        if grant == "refresh_token":
            scopes = self.refresh_tokens.get(str(form.get("refresh_token")))
            if scopes is None:
                body = {
                    "error": "invalid_grant",
                    "error_description": "Token has been expired or revoked.",
                }
                return web.json_response(body, status=400)
            self.refresh_count += 1
            return web.json_response(self._issue(scopes))
        return web.json_response({"error": "unsupported_grant_type"}, status=400)

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

    # -- Calendar: test controls ---------------------------------------------------------

    def _calendar(self, name: str) -> str | None:
        if name == "primary":
            return ME
        return name if name in self.events else None

    def add_event(
        self, summary: str, start: datetime, *, calendar: str = "primary", **fields
    ) -> dict:
        """An event appears on a calendar (created elsewhere); returns it."""
        end = fields.pop("end", start + timedelta(hours=1))
        body = {
            "summary": summary,
            "start": {"dateTime": rfc3339(start)},
            "end": {"dateTime": rfc3339(end)},
            **fields,
        }
        return self._create(self._calendar(calendar) or calendar, body)

    def change_event(self, event_id: str, *, calendar: str = "primary", **fields) -> dict:
        event = self.events[self._calendar(calendar)][event_id]
        event.update(fields)
        self._touch(event)
        return event

    def cancel_event(self, event_id: str, *, calendar: str = "primary") -> None:
        event = self.events[self._calendar(calendar)][event_id]
        event["status"] = "cancelled"
        self._touch(event)

    def invalidate_sync_tokens(self) -> None:
        """Google may drop sync tokens at any time (410 Gone)."""
        self.min_sync_seq = self.seq + 1

    def _touch(self, event: dict[str, Any]) -> None:
        self.seq += 1
        event["_seq"] = self.seq
        event["etag"] = f'"{self.seq}"'
        event["updated"] = rfc3339(datetime.now(UTC) + timedelta(microseconds=self.seq))
        event["sequence"] = event.get("sequence", -1) + 1

    def _create(self, calendar_id: str, body: dict[str, Any]) -> dict[str, Any]:
        event_id = f"ev{next(self._ids)}"
        event = {
            "kind": "calendar#event",
            "id": event_id,
            "status": "confirmed",
            "htmlLink": f"https://calendar.example.com/event?eid={event_id}",
            "created": rfc3339(datetime.now(UTC)),
            "creator": {"email": ME, "self": True},
            "organizer": {"email": calendar_id, "self": calendar_id == ME},
            "iCalUID": f"{event_id}@google.com",
            **body,
        }
        self._touch(event)
        self.events[calendar_id][event_id] = event
        return event

    # -- Calendar: handlers --------------------------------------------------------------

    async def _calendar_list(self, request: web.Request) -> web.Response:
        items = [
            {"kind": "calendar#calendarListEntry", "accessRole": "owner", **c}
            for c in self.calendars
        ]
        return web.json_response({"kind": "calendar#calendarList", "items": items})

    async def _list_events(self, request: web.Request) -> web.Response:
        calendar_id = self._calendar(request.match_info["cal"])
        if calendar_id is None:
            return not_found()
        q = request.query
        if "syncToken" in q:
            clash = {"timeMin", "timeMax", "q", "orderBy", "updatedMin", "iCalUID"} & set(q)
            if clash:
                return bad_request(f"syncToken cannot be used with {sorted(clash)}")
            token_seq = _sync_seq(q["syncToken"], calendar_id)
            if token_seq is None or token_seq < self.min_sync_seq:
                return google_error(
                    410,
                    "Sync token is no longer valid, a full sync is required.",
                    "fullSyncRequired",
                    "GONE",
                )
            found = [e for e in self.events[calendar_id].values() if e["_seq"] > token_seq]
        else:
            show_deleted = q.get("showDeleted") == "true"
            found = [
                e
                for e in self.events[calendar_id].values()
                if (show_deleted or e["status"] != "cancelled")
                and _in_range(e, q)
                and _has_text(e, q)
            ]
        if q.get("orderBy") == "startTime":
            if q.get("singleEvents") != "true":
                return bad_request(
                    "The requested ordering is not available for the particular query."
                )
            found.sort(key=_start_of)
        else:
            found.sort(key=lambda e: e["_seq"])
        offset = int(q.get("pageToken", "0"))
        size = min(int(q.get("maxResults", "250")), 2500)
        page = found[offset : offset + size]
        body: dict[str, Any] = {
            "kind": "calendar#events",
            "summary": calendar_id,
            "timeZone": q.get("timeZone", "Europe/Zurich"),
            "items": [_public(e) for e in page],
        }
        if offset + size < len(found):
            body["nextPageToken"] = str(offset + size)
        else:
            body["nextSyncToken"] = f"sync:{calendar_id}:{self.seq}"
        return web.json_response(body)

    async def _get_event(self, request: web.Request) -> web.Response:
        calendar_id = self._calendar(request.match_info["cal"])
        event = (self.events.get(calendar_id) or {}).get(request.match_info["id"])
        return web.json_response(_public(event)) if event else not_found()

    async def _insert_event(self, request: web.Request) -> web.Response:
        calendar_id = self._calendar(request.match_info["cal"])
        if calendar_id is None:
            return not_found()
        body = await request.json()
        if "start" not in body or "end" not in body:
            return bad_request("Missing end time." if "start" in body else "Missing start time.")
        return web.json_response(_public(self._create(calendar_id, body)))

    async def _patch_event(self, request: web.Request) -> web.Response:
        calendar_id = self._calendar(request.match_info["cal"])
        event = (self.events.get(calendar_id) or {}).get(request.match_info["id"])
        if event is None:
            return not_found()
        event.update({k: v for k, v in (await request.json()).items() if k not in ("id", "kind")})
        self._touch(event)
        return web.json_response(_public(event))

    async def _delete_event(self, request: web.Request) -> web.Response:
        calendar_id = self._calendar(request.match_info["cal"])
        event = (self.events.get(calendar_id) or {}).get(request.match_info["id"])
        if event is None:
            return not_found()
        if event["status"] == "cancelled":
            return google_error(410, "Resource has been deleted", "deleted", "GONE")
        event["status"] = "cancelled"
        self._touch(event)
        return web.Response(status=204)


# -- helpers for the fake's own wire shapes ---------------------------------------------


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


def _public(event: dict[str, Any]) -> dict[str, Any]:
    if event["status"] == "cancelled":
        # Deleted events come back from incremental sync stripped to their identity.
        return {
            "kind": "calendar#event",
            "etag": event["etag"],
            "id": event["id"],
            "status": "cancelled",
        }
    return {k: v for k, v in event.items() if not k.startswith("_")}


def _sync_seq(token: str, calendar_id: str) -> int | None:
    kind, _, rest = token.partition(":")
    cal, _, seq = rest.rpartition(":")
    if kind != "sync" or cal != calendar_id or not seq.isdigit():
        return None
    return int(seq)


def _moment(value: dict[str, str]) -> datetime:
    if "dateTime" in value:
        moment = datetime.fromisoformat(value["dateTime"])
        if moment.tzinfo is None:  # a local time is read in the event's own zone
            moment = moment.replace(tzinfo=ZoneInfo(value.get("timeZone", "UTC")))
        return moment
    return datetime.fromisoformat(value["date"]).replace(tzinfo=UTC)


def _start_of(event: dict[str, Any]) -> datetime:
    return _moment(event["start"])


def _in_range(event: dict[str, Any], q) -> bool:
    if "timeMin" in q and _moment(event["end"]) <= datetime.fromisoformat(q["timeMin"]):
        return False
    if "timeMax" in q and _moment(event["start"]) >= datetime.fromisoformat(q["timeMax"]):
        return False
    return True


def _has_text(event: dict[str, Any], q) -> bool:
    text = q.get("q", "").lower()
    fields = (event.get("summary", ""), event.get("description", ""), event.get("location", ""))
    return not text or any(text in str(f).lower() for f in fields)


def parse_sent(raw: bytes) -> Message:
    """A message the server sent, parsed (for assertions on headers and body)."""
    return message_from_bytes(raw)
