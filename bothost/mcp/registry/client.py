"""Reading an MCP registry over HTTP: search by words, look an entry up by its name.

The API is the official MCP Registry's (``GET {base}/v0.1/servers?search=&cursor=&limit=``,
items ``{"server", "_meta"}``, ``metadata.nextCursor``). The client asks ``/v0.1`` first (the
frozen API the official registry serves now) and falls back to ``/v0`` when the registry
answers 404 there, remembering which one answered. Everything a registry sends is bounded:
each request has a deadline, each answer a size, a search or a lookup a number of pages,
and a cursor that comes back again ends the paging. A failure is one line naming the URL.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bothost.logs import connection
from bothost.mcp.registry.entries import Entry, parse_item, text

if TYPE_CHECKING:
    import aiohttp

API_VERSIONS = ("v0.1", "v0")  # newest first; a registry without it answers 404
PAGE_SIZE = 50  # items asked for per page; the official registry allows up to 100
MAX_PAGES = 10  # pages read for one search or lookup: 500 items, then "more" is said
MAX_BYTES = 4 << 20  # one page of 100 full entries is ~300 KB; more is not a registry answer
REQUEST_TIMEOUT = 20.0  # one page, connect to last byte
MAX_CURSOR = 1000
SUGGESTIONS = 3
SUGGESTION_SEARCHES = 3  # pages read to find close names for a name not found


class RegistryError(Exception):
    """The registry could not be read or its answer used; one line naming its URL."""


class RegistryUnreachableError(RegistryError):
    """No answer from the registry at all."""


class EntryNotFoundError(RegistryError):
    """No entry of that name; ``suggestions`` are close names a search found."""

    def __init__(self, message: str, suggestions: list[str]) -> None:
        super().__init__(message)
        self.suggestions = suggestions


@dataclass
class Found:
    """What a search found: its entries (the latest version of each name) and whether the
    registry holds more than were read."""

    entries: list[Entry] = field(default_factory=list)
    more: bool = False


def base_url(url: str) -> str:
    """The registry's base URL as given, without a trailing ``/`` or API version."""
    url = url.strip().rstrip("/")
    for version in API_VERSIONS:
        url = url.removesuffix(f"/{version}")
    return url


class Registry:
    """One registry, read with a session of its own for the length of an ``async with``."""

    def __init__(self, url: str, timeout: float = REQUEST_TIMEOUT) -> None:
        self.url = base_url(url)
        self.timeout = timeout
        self.version: str | None = None  # the API version that answered
        self._http: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Registry:
        import aiohttp  # only when a registry is read: `--help` lists `mcp search` (~0.15 s)

        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout))
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self._http is not None:
            await self._http.close()

    async def page(
        self, search: str, cursor: str | None = None, limit: int = PAGE_SIZE
    ) -> tuple[list[Entry], str | None]:
        """One page of ``/servers``: its entries and the next cursor (None: the last page)."""
        params = {"search": search, "limit": str(limit), **({"cursor": cursor} if cursor else {})}
        for version in [self.version] if self.version else API_VERSIONS:
            status, body = await self._get(f"{self.url}/{version}/servers", params)
            if status == 404 and self.version is None:
                continue
            if status != 200:
                raise RegistryError(f"the MCP registry at {self.url} answered HTTP {status}")
            self.version = version
            return self._read(body)
        raise RegistryError(
            f"no MCP registry API at {self.url} (404 for /v0.1/servers and /v0/servers)"
        )

    async def search(self, query: str, limit: int) -> Found:
        """Up to ``limit`` entries whose name or description matches ``query``."""
        found: dict[str, Entry] = {}
        cursor, seen = None, set()
        for _ in range(MAX_PAGES):
            entries, cursor = await self.page(query, cursor)
            for entry in entries:
                keep(found, entry)
            if cursor is None or cursor in seen or len(found) > limit:
                break
            seen.add(cursor)
        more = len(found) > limit or (cursor is not None and cursor not in seen)
        return Found(list(found.values())[:limit], more)

    async def find(self, name: str) -> Entry:
        """The latest version of the entry called ``name``; :class:`EntryNotFoundError`
        with close names when there is none."""
        found: dict[str, Entry] = {}
        cursor, seen = None, set()
        for _ in range(MAX_PAGES):
            entries, cursor = await self.page(name, cursor)
            for entry in entries:
                keep(found, entry)
            if (name in found and found[name].latest) or cursor is None or cursor in seen:
                break
            seen.add(cursor)
        if name in found:
            return found[name]
        close: list[str] = []
        for word in suggestion_searches(name):
            entries, _cursor = await self.page(word)
            for entry in entries:
                keep(found, entry)
            close = difflib.get_close_matches(name, list(found), n=SUGGESTIONS, cutoff=0.6)
            if close:
                break
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        raise EntryNotFoundError(
            f"the MCP registry at {self.url} has no server {name}{hint}", close
        )

    async def _get(self, url: str, params: dict[str, str]) -> tuple[int, bytes]:
        assert self._http is not None, "use the registry in `async with`"
        import aiohttp  # loaded by __aenter__ already: the name for the errors caught below

        try:
            async with (
                asyncio.timeout(self.timeout),
                self._http.get(url, params=params, headers={"Accept": "application/json"}) as r,
            ):
                if r.status != 200:
                    return r.status, b""
                body = bytearray()
                async for chunk in r.content.iter_chunked(1 << 16):
                    body += chunk
                    if len(body) > MAX_BYTES:
                        raise RegistryError(
                            f"the MCP registry at {self.url} sent more than "
                            f"{MAX_BYTES >> 20} MiB for one page"
                        )
                return r.status, bytes(body)
        except TimeoutError:
            raise RegistryUnreachableError(
                f"the MCP registry at {self.url} did not answer within {self.timeout:g} s"
            ) from None
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            reason = text(connection.cause(exc))  # "Connection refused", as the LLM client says
            raise RegistryUnreachableError(
                f"cannot reach the MCP registry at {self.url}: {reason}"
            ) from None

    def _read(self, body: bytes) -> tuple[list[Entry], str | None]:
        try:
            data: Any = json.loads(body)
        except ValueError:
            raise RegistryError(f"the MCP registry at {self.url} answered with no JSON") from None
        servers = data.get("servers") if isinstance(data, dict) else None
        if not isinstance(servers, list):
            raise RegistryError(f"the MCP registry at {self.url} answered with no list of servers")
        metadata = data.get("metadata")
        cursor = metadata.get("nextCursor") if isinstance(metadata, dict) else None
        cursor = cursor if isinstance(cursor, str) and 0 < len(cursor) <= MAX_CURSOR else None
        entries = [e for e in map(parse_item, servers[: PAGE_SIZE * 2]) if e is not None]
        return entries, cursor


def suggestion_searches(name: str) -> list[str]:
    """What to search for close names: the server part, then its words, longest first (the
    registry matches a substring, so a misspelt name finds nothing whole)."""
    word = name.rsplit("/", 1)[-1]
    parts = sorted({p for p in re.split(r"[-_.]+", word) if len(p) >= 3}, key=len, reverse=True)
    return [word, *[p for p in parts if p != word]][:SUGGESTION_SEARCHES]


def keep(found: dict[str, Entry], entry: Entry) -> None:
    """Remember ``entry`` unless the registry deleted it or a later version is known."""
    if entry.status == "deleted":
        return
    known = found.get(entry.name)
    if known is None or (entry.latest and not known.latest):
        found[entry.name] = entry
