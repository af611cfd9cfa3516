"""The web API's JSON request bodies: read within the listener's limit, decoded with the
host's checks, and every refusal a JSON error like the API's others.

aiohttp refuses a body over the application's ``client_max_size`` with a plain-text 413 of
its own ("Maximum request body size … exceeded"); a client of a JSON API reads the error
from JSON, so the limit is named in one here.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from bothost import jsondecode


class JsonError(web.HTTPException):
    """A refusal answered as ``{"error": reason}`` with the status given."""

    def __init__(self, status: int, reason: str) -> None:
        self.status_code, self.reason_text = status, reason
        super().__init__(text=json.dumps({"error": reason}), content_type="application/json")


async def json_object(request: web.Request) -> dict[str, Any]:
    """The request's JSON object; :class:`JsonError` 413 over the size limit, 400 when the
    host's decoding refuses it."""
    if (request.content_length or 0) > jsondecode.MAX_BYTES:  # said before a byte is read
        raise JsonError(413, f"body larger than {jsondecode.MAX_BYTES} bytes")
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        # the listener's client_max_size (bothost.http.server)
        raise JsonError(413, f"body larger than {jsondecode.MAX_BYTES} bytes") from None
    try:
        return jsondecode.decode_object(raw)
    except jsondecode.JsonInputError as exc:
        raise JsonError(400, str(exc)) from None
