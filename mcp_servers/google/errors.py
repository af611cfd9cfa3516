"""The failures a Google-backed tool reports to the model, and how an HTTP error maps to one.

`GoogleError` derives from the kit's `ToolError`, so raising it inside a tool becomes an
`isError` result the model can read; watchers inspect its `status` (404, 410) to resync.
"""

from __future__ import annotations

import json

from bothost.mcp_servers.kit import ToolError


class GoogleError(ToolError):
    """A Google API call failed; `status` is the HTTP status (0 when there was no answer)."""

    def __init__(self, message: str, status: int = 0, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


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
    return GoogleError(f"Google API error {status}: {message}", status=status, reason=reason)


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
