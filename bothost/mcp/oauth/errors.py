"""The ways logging in to a protected server fails."""

from __future__ import annotations

from bothost.mcp.transport import TransportError


class OAuthError(TransportError):
    """Discovery, registration or a token request failed (the server's or config's fault)."""

    def __init__(self, message: str, code: str = "", retry_after: float | None = None) -> None:
        super().__init__(message)
        self.code = code  # the OAuth `error` value when the server sent one
        # seconds a 429 or 503 asked us to wait (its Retry-After), None when it did not say
        self.retry_after = retry_after


class LoginRequiredError(TransportError):
    """A person has to log in (``bothost mcp login NAME``) before the server can be used."""
