"""Dedupe keys for events: what makes two pushes "the same occurrence".

The key is ``source:type:`` followed by the payload's ``id`` when the producer gave one (our
servers do, per occurrence), else a hash of the canonical payload, so a producer that
re-sends the identical body is still recognised. A caller that already has a key (a
webhook's ``webhook-id``) passes it on the event and it is used as given.
"""

from __future__ import annotations

import hashlib
import json
from json import encoder
from typing import Any

from bothost.models import Event

HASH_CHARS = 32  # 128 bits of sha256: collisions are not a practical concern


# one encoder for every event: json.dumps with options builds a new one per call
CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str, allow_nan=False
)
# The same encoding through CPython's C encoder built once: JSONEncoder.encode builds one per
# call, which was a third of the encoding's cost in a burst's profile. No circular-reference
# markers (a shared set would keep stale ids after a failed call): a payload that contains
# itself fails with RecursionError instead of ValueError, an event error all the same.
_make_encoder = getattr(encoder, "c_make_encoder", None)  # None without the C accelerator
_C_CANONICAL = (
    _make_encoder(None, str, encoder.encode_basestring, None, ":", ",", True, False, False)
    if _make_encoder is not None
    else None
)


def canonical_json(payload: Any) -> str:
    """The payload as compact JSON with sorted keys: equal payloads give equal text.

    Raises :class:`ValueError` for a float that JSON has no number for (NaN, Infinity):
    Python's json reads them from a peer (an MCP server's notification), but stored they
    would make every later reader of the payload (``events list --json``, a dashboard)
    hand on text that is not JSON.
    """
    try:
        if _C_CANONICAL is None or isinstance(payload, str):  # a str is its own one chunk
            return CANONICAL.encode(payload)
        return "".join(_C_CANONICAL(payload, 0))
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
        raise ValueError("the payload is not JSON: NaN and Infinity are not JSON numbers") from None


def dedupe_key(event: Event, canonical: str | None = None) -> str:
    """The event's dedupe key (its own ``dedupe_key`` when set)."""
    if event.dedupe_key:
        return event.dedupe_key
    payload = event.payload if isinstance(event.payload, dict) else {}
    occurrence = payload.get("id")
    if occurrence not in (None, ""):
        return f"{event.source}:{event.type}:{occurrence}"
    text = canonical if canonical is not None else canonical_json(event.payload)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_CHARS]
    return f"{event.source}:{event.type}:sha256:{digest}"
