"""Wire-format pieces every part of the fake Google shares: ids, encodings, error bodies."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

from aiohttp import web

ME = "me@example.com"
CLIENT_ID = "fake-client.apps.googleusercontent.com"
CLIENT_SECRET = "fake-client-secret"


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
