"""A fake MCP Registry on 127.0.0.1 speaking the official registry's API.

``GET /v0.1/servers`` and ``/v0/servers`` with ``search`` (a case-insensitive substring of
the name, as the official registry matches), ``limit`` and an opaque ``cursor``; items
``{"server": server.json, "_meta": {"io.modelcontextprotocol.registry/official": …}}``;
``metadata.nextCursor`` only while more follow. Like the real one it may send fewer items
than asked for (``page_size``). ``versions`` chooses which API paths exist (the others
answer 404); ``answer`` replaces every answer with a hostile or broken one. ``requests``
records each request's path and query.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from tests.helpers import serve_app

OFFICIAL = "io.modelcontextprotocol.registry/official"


def item(server: dict[str, Any], *, latest: bool = True, status: str = "active") -> dict:
    """A listing item as the registry sends it."""
    return {
        "server": {
            "$schema": "https://static.modelcontextprotocol.io/schemas/2025-10-17/server.schema.json",
            **server,
        },
        "_meta": {
            OFFICIAL: {
                "status": status,
                "publishedAt": "2026-03-02T10:11:12.123456Z",
                "updatedAt": "2026-03-02T10:11:12.123456Z",
                "isLatest": latest,
            }
        },
    }


class FakeRegistry:
    def __init__(
        self,
        items: list[dict],
        page_size: int = 100,
        versions: tuple[str, ...] = ("v0.1", "v0"),
    ) -> None:
        self.items = items
        self.page_size = page_size
        self.versions = versions
        self.answer: Callable[[web.Request], Awaitable[web.StreamResponse]] | None = None
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> FakeRegistry:
        app = web.Application()
        app.router.add_get("/{version}/servers", self.servers)
        self.runner, self.url = await serve_app(app)
        return self

    async def close(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    async def servers(self, request: web.Request) -> web.StreamResponse:
        self.requests.append((request.path, dict(request.query)))
        if request.match_info["version"] not in self.versions:
            return web.json_response({"title": "Not Found", "status": 404}, status=404)
        if self.answer is not None:
            return await self.answer(request)
        search = request.query.get("search", "").lower()
        limit = min(int(request.query.get("limit", "30")), 100, self.page_size)
        matched = [i for i in self.items if search in i["server"]["name"].lower()]
        cursor = request.query.get("cursor")
        start = int(base64.urlsafe_b64decode(cursor)) if cursor else 0
        page = matched[start : start + limit]
        metadata: dict[str, Any] = {"count": len(page)}
        if start + limit < len(matched):
            metadata["nextCursor"] = base64.urlsafe_b64encode(str(start + limit).encode()).decode()
        return web.json_response({"servers": page, "metadata": metadata})
