"""The failures a Google-backed tool reports to the model, and how an HTTP error maps to one.

`GoogleError` derives from the kit's `ToolError`, so raising it inside a tool becomes an
`isError` result the model can read; watchers inspect its `status` (404, 410) to resync.
"""

from __future__ import annotations

import json
import time

from bothost.mcp_servers.kit import ToolError

UNREACHABLE = "unreachable"  # the reason of a call Google did not answer (a network error)
# 403 reasons that are Google's rate limits, not a refusal (googleapiclient retries them too)
RATE_LIMIT_REASONS = {"rateLimitExceeded", "userRateLimitExceeded"}


class GoogleError(ToolError):
    """A Google API call failed; `status` is the HTTP status (0 when there was no answer).
    `retry_after` is the seconds its `Retry-After` header asked for, None when it sent none."""

    def __init__(
        self, message: str, status: int = 0, reason: str = "", retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.retry_after = retry_after

    @property
    def passing(self) -> bool:
        """Whether asking again later may succeed: a rate limit, Google having trouble, or
        the network (googleapiclient retried these; a send may then go twice, as it did)."""
        return (
            self.status == 429
            or self.status >= 500
            or self.reason == UNREACHABLE
            or (self.status == 403 and self.reason in RATE_LIMIT_REASONS)
        )


class AuthRequiredError(GoogleError):
    """No usable token: missing, unreadable, or revoked. The message names the fix."""

    def __init__(self, server: str, why: str) -> None:
        super().__init__(
            f"{why}. Run `bothost-mcp-{server} auth` on this machine to authorize access "
            "to Google (`bothost docs google-setup` tells how).",
            status=401,
            reason="authRequired",
        )


def from_http_error(error) -> GoogleError:
    """Turn a `googleapiclient.errors.HttpError` into a readable `GoogleError`."""
    status = int(getattr(error.resp, "status", 0) or 0)
    message, reason = _google_error_body(error.content)
    if not message:
        message = getattr(error, "reason", "") or "request failed"
    headers = error.resp if hasattr(error.resp, "get") else {}
    return GoogleError(
        f"Google API error {status}: {message}",
        status=status,
        reason=reason,
        retry_after=retry_after_seconds(headers.get("retry-after")),
    )


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds a `Retry-After` header asks for (delta-seconds or an HTTP date), or None; a
    date is counted from `now` (epoch seconds; the wall clock's when not given).

    The same reading as the host's `bothost.platform.retry_after_seconds`, written again
    here because a bundled server imports only its kit, never the host's core (it runs as
    its own process, and may be installed and started without the host);
    tests/mcp_servers/test_google_client.py holds the two to the same answers."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    import email.utils  # here: only an answer that carries a date needs it

    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


def _google_error_body(content: bytes | str | None) -> tuple[str, str]:
    """Google's JSON error body: {"error": {"code", "message", "errors": [{"reason"}]}}."""
    try:
        body = json.loads(content or b"{}")
    except (ValueError, TypeError):
        return "", ""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return "", ""
    reasons = [e.get("reason", "") for e in error.get("errors") or [] if isinstance(e, dict)]
    return str(error.get("message", "")), (reasons[0] if reasons else "")
