"""A registry entry (``server.json`` with the registry's ``_meta``), read leniently and bounded.

The official MCP Registry answers with items ``{"server": server.json, "_meta": {…}}``. Only
what bothost uses is kept: unknown fields are ignored, a missing optional one is fine, a field
of the wrong type counts as missing. Whatever a registry sends reaches a terminal and the
database, so every string is cut to a bound with its control characters (terminal escapes)
taken out, and every list is cut to :data:`MAX_ITEMS`; an item without a usable name is
skipped (None), never fatal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

OFFICIAL = "io.modelcontextprotocol.registry/official"  # the registry's own _meta key
MAX_TEXT = 300  # server.json allows 100 for a description; more is noise or an attack
MAX_FIELD = 200  # names, identifiers, versions, urls, values
MAX_ITEMS = 30  # packages, remotes, variables, arguments or headers of one entry
# `io.github.owner/server`: reverse DNS (a dot before the slash), then one name. The
# registry's own pattern is `[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+`; the dot tells it from an npm
# `scope/name` written without its `@`.
REGISTRY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)+/[A-Za-z0-9._-]+")
VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # what `${env:NAME}` can name
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def is_registry_name(text: str) -> bool:
    """Whether `mcp install` reads ``text`` as a registry name (not a PyPI or npm package)."""
    return not text.startswith(("@", "npm:")) and bool(REGISTRY_NAME.fullmatch(text))


def text(value: Any, limit: int = MAX_FIELD) -> str:
    """``value`` as one safe line: a string, control characters made spaces, cut to ``limit``."""
    if not isinstance(value, str):
        return ""
    return CONTROL.sub(" ", value[: limit * 2]).strip()[:limit]


def flag(value: Any) -> bool:
    return value is True


def objects(value: Any) -> list[dict[str, Any]]:
    """The objects of a list, at most :data:`MAX_ITEMS`; anything else is no list."""
    if not isinstance(value, list):
        return []
    return [item for item in value[:MAX_ITEMS] if isinstance(item, dict)]


@dataclass(frozen=True)
class Variable:
    """An environment variable a package reads (``environmentVariables``)."""

    name: str
    description: str = ""
    required: bool = False
    secret: bool = False
    default: str = ""


@dataclass(frozen=True)
class Argument:
    """A package or runtime argument: ``positional`` (its value) or ``named`` (name, value)."""

    kind: str
    name: str = ""
    value: str = ""
    hint: str = ""
    required: bool = False
    description: str = ""


@dataclass(frozen=True)
class Package:
    registry: str  # npm | pypi | oci (others are listed, never installed)
    identifier: str
    version: str = ""
    transport: str = "stdio"
    runtime_arguments: tuple[Argument, ...] = ()
    arguments: tuple[Argument, ...] = ()
    variables: tuple[Variable, ...] = ()


@dataclass(frozen=True)
class Header:
    name: str
    description: str = ""
    required: bool = False
    secret: bool = False
    value: str = ""


@dataclass(frozen=True)
class Remote:
    transport: str  # streamable-http | sse
    url: str
    headers: tuple[Header, ...] = ()


@dataclass(frozen=True)
class Entry:
    name: str
    description: str = ""
    version: str = ""
    title: str = ""
    repository: str = ""
    website: str = ""
    packages: tuple[Package, ...] = ()
    remotes: tuple[Remote, ...] = ()
    status: str = "active"
    latest: bool = True
    updated: str = ""

    def kinds(self) -> list[str]:
        """How it installs: its package registries in order, then ``remote``."""
        found = list(dict.fromkeys(p.registry for p in self.packages))
        return found + (["remote"] if self.remotes else [])

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "version": self.version,
            "kinds": self.kinds(),
            "status": self.status,
            "repository": self.repository,
            "website": self.website,
        }


def variable(data: dict[str, Any]) -> Variable | None:
    name = text(data.get("name"))
    if not VARIABLE.fullmatch(name):
        return None  # not a name `${env:…}` can carry; nothing could set it
    return Variable(
        name,
        text(data.get("description"), MAX_TEXT),
        flag(data.get("isRequired")),
        flag(data.get("isSecret")),
        text(data.get("default")),
    )


def argument(data: dict[str, Any]) -> Argument | None:
    kind = text(data.get("type"))
    if kind not in ("positional", "named"):
        return None
    return Argument(
        kind,
        text(data.get("name")),
        text(data.get("value")) or text(data.get("default")),
        text(data.get("valueHint")),
        flag(data.get("isRequired")),
        text(data.get("description"), MAX_TEXT),
    )


def package(data: dict[str, Any]) -> Package | None:
    registry = text(data.get("registryType") or data.get("registry_type")).lower()
    identifier = text(data.get("identifier") or data.get("name"))
    if not registry or not identifier:
        return None
    transport = data.get("transport")
    kind = text(transport.get("type")) if isinstance(transport, dict) else ""
    return Package(
        registry,
        identifier,
        text(data.get("version")),
        kind or "stdio",
        tuple(a for a in map(argument, objects(data.get("runtimeArguments"))) if a),
        tuple(a for a in map(argument, objects(data.get("packageArguments"))) if a),
        tuple(v for v in map(variable, objects(data.get("environmentVariables"))) if v),
    )


def header(data: dict[str, Any]) -> Header | None:
    name = text(data.get("name"))
    if not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name):  # an HTTP token
        return None
    return Header(
        name,
        text(data.get("description"), MAX_TEXT),
        flag(data.get("isRequired")),
        flag(data.get("isSecret")),
        text(data.get("value")),
    )


def remote(data: dict[str, Any]) -> Remote | None:
    url = text(data.get("url"))
    if not url:
        return None
    headers = tuple(h for h in map(header, objects(data.get("headers"))) if h)
    return Remote(text(data.get("type")) or "streamable-http", url, headers)


def parse_item(item: Any) -> Entry | None:
    """One item of a listing (``{"server", "_meta"}``, or a bare server.json), or None."""
    if not isinstance(item, dict):
        return None
    inner = item.get("server")
    server: dict[str, Any] = inner if isinstance(inner, dict) else item
    name = text(server.get("name"))
    if not name:
        return None
    meta = item.get("_meta")
    found = meta.get(OFFICIAL) if isinstance(meta, dict) else None
    official: dict[str, Any] = found if isinstance(found, dict) else {}
    repository = server.get("repository")
    return Entry(
        name=name,
        description=text(server.get("description"), MAX_TEXT),
        version=text(server.get("version")),
        title=text(server.get("title")),
        repository=text(repository.get("url")) if isinstance(repository, dict) else "",
        website=text(server.get("websiteUrl")),
        packages=tuple(p for p in map(package, objects(server.get("packages"))) if p),
        remotes=tuple(r for r in map(remote, objects(server.get("remotes"))) if r),
        status=text(official.get("status")) or "active",
        latest=official.get("isLatest") is not False,
        updated=text(official.get("updatedAt") or official.get("publishedAt")),
    )
