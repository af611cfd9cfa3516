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


# How Google words its "not now" answers (Gmail and Calendar, v1/v3 JSON error format).
BUSY = {
    429: ("Too many concurrent requests for user", "rateLimitExceeded", "RESOURCE_EXHAUSTED"),
    403: ("User-rate limit exceeded", "userRateLimitExceeded", "PERMISSION_DENIED"),
    503: ("The service is currently unavailable.", "backendError", "UNAVAILABLE"),
}


def busy(code: int, retry_after: str | None) -> web.Response:
    """A rate-limit or unavailable answer, with a Retry-After header when one is given."""
    response = google_error(code, *BUSY[code])
    if retry_after is not None:
        response.headers["Retry-After"] = retry_after
    return response
