"""Following a list method's pages within bounds: resources, resource templates, prompts.

``tools/list`` has its own, stricter handling in :mod:`bothost.mcp.session` (a tool list
over a bound is refused whole, because tools go missing unseen). These lists are read by a
person or the model on request, so one over a bound is cut and says so instead: what fits
is more use than nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

MAX_PAGES = 20  # a server that pages forever is stopped here
MAX_ITEMS = 500  # more than a person or a model reads in one listing


class Requester(Protocol):
    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and return its result; raises McpError."""


@dataclass
class Listing:
    """What a list method returned: the items (dicts only), and whether more were left."""

    items: list[dict[str, Any]] = field(default_factory=list)
    cut: bool = False


async def list_all(session: Requester, method: str, key: str) -> Listing:
    """Every item of ``method`` under ``key``, following ``nextCursor`` within the bounds."""
    listing = Listing()
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        page = await session.request(method, {"cursor": cursor} if cursor else {})
        found = page.get(key)
        for item in found if isinstance(found, list) else []:
            if isinstance(item, dict):
                if len(listing.items) >= MAX_ITEMS:
                    listing.cut = True
                    return listing
                listing.items.append(item)
        cursor = page.get("nextCursor")
        if not cursor or not isinstance(cursor, str) or cursor in seen:
            return listing
        seen.add(cursor)
    listing.cut = True
    return listing
