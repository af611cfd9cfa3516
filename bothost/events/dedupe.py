"""Dedupe keys for events: what makes two pushes "the same occurrence".

The key is ``source:type:`` followed by the payload's ``id`` when the producer gave one (our
servers do, per occurrence), else a hash of the canonical payload, so a producer that
re-sends the identical body is still recognised. A caller that already has a key (a
webhook's ``webhook-id``) passes it on the event and it is used as given.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from bothost.models import Event

HASH_CHARS = 32  # 128 bits of sha256: collisions are not a practical concern


# one encoder for every event: json.dumps with options builds a new one per call
CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def canonical_json(payload: Any) -> str:
    """The payload as compact JSON with sorted keys: equal payloads give equal text."""
    return CANONICAL.encode(payload)


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
