"""Reads of core tables for plugins: what the dashboard, metrics, web chat and Slack show.

Core tables are private to ``bothost/``; plugins read them only through :class:`Queries`
(reached as ``host.queries``), so the store's schema and backend can change in one place.
"""

from __future__ import annotations

from bothost.store import Store


class Queries:
    """Read-only questions about core data, answered from the store."""

    def __init__(self, store: Store) -> None:
        self.store = store
