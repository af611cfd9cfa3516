"""The HTTP headers a 2026-07-28 request carries besides its body (SEP-2243).

Every POST names its JSON-RPC method in ``Mcp-Method``, and the tool, prompt or resource it
is about in ``Mcp-Name``, so a gateway can route and authorize without parsing bodies. A
tool may ask for some of its arguments as headers too: a property of its input schema
marked ``x-mcp-header: Region`` is sent as ``Mcp-Param-Region`` on every ``tools/call``.
Values that would not survive an HTTP field (not printable ASCII, or with whitespace at an
edge) are sent as ``=?base64?…?=``.

A tool whose ``x-mcp-header`` marks are malformed — empty, not an RFC 9110 token, on a
property that is not a string, integer or boolean, reachable other than through
``properties``, or named twice ignoring case — must not be used at all (the spec has the
client exclude it): :func:`refusal` says why, and the session skips the tool as it skips
one with a bad name.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from typing import Any

METHOD = "Mcp-Method"
NAME = "Mcp-Name"
PARAM_PREFIX = "Mcp-Param-"
MARK = "x-mcp-header"
# the request field Mcp-Name mirrors, per method
NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 §5.6.2
PLAIN = re.compile(r"[\x20-\x7e]*")  # printable ASCII: sent as is (edges checked apart)
SENTINEL = re.compile(r"=\?base64\?[A-Za-z0-9+/=]*\?=")
MARKABLE_TYPES = ("string", "integer", "boolean")
# keywords whose value is one schema, or a list or a map of them: the walk enters them to
# find marks placed where they may not be (a mark counts only on a pure `properties` path)
ONE = ("items", "contains", "additionalProperties", "propertyNames", "not", "if", "then")
ONE_MORE = ("else", "unevaluatedItems", "unevaluatedProperties", "contentSchema")
LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
MAPS = ("patternProperties", "dependentSchemas", "$defs", "definitions")


def encoded(value: str) -> str:
    """`value` as a header field carries it: as is when plain, else base64 in the sentinel."""
    if PLAIN.fullmatch(value) and value == value.strip() and not SENTINEL.fullmatch(value):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


def for_request(method: str, params: dict[str, Any], tool: dict[str, Any] | None) -> dict:
    """The SEP-2243 headers of one request (`tool`: the listed definition, for tools/call)."""
    headers = {METHOD: method}
    name = params.get(NAMED_BY.get(method, ""))
    if isinstance(name, str):
        headers[NAME] = encoded(name)
    if method == "tools/call" and tool is not None:
        arguments = params.get("arguments")
        if isinstance(arguments, dict):
            headers.update(param_headers(tool.get("inputSchema"), arguments))
    return headers


def param_headers(schema: Any, arguments: dict[str, Any]) -> dict[str, str]:
    """``Mcp-Param-*`` for each marked property the arguments give a value (null: none)."""
    headers: dict[str, str] = {}
    for path, token, _ in marks(schema):
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, bool):
            headers[PARAM_PREFIX + token] = "true" if value else "false"
        elif isinstance(value, str | int | float):
            headers[PARAM_PREFIX + token] = encoded(str(value))
    return headers


def refusal(schema: Any) -> str | None:
    """Why a tool's ``x-mcp-header`` marks make it unusable, or None when they are sound."""
    seen: dict[str, str] = {}
    for path, token, where in marks(schema, strict=True):
        if path is None:
            return f"{MARK} placed outside a plain properties path"
        name = ".".join(path)
        if not isinstance(token, str) or not TOKEN.fullmatch(token):
            return f"{MARK} {str(token)[:40]!r} on {name!r} is not a header name"
        if where.get("type") not in MARKABLE_TYPES:
            return f"{MARK} on {name!r}, whose type is not string, integer or boolean"
        if token.lower() in seen:
            return f"{MARK} {token!r} on {name!r} repeats the one on {seen[token.lower()]!r}"
        seen[token.lower()] = name
    return None


def marks(schema: Any, strict: bool = False) -> Iterator[tuple[Any, Any, dict[str, Any]]]:
    """(path of property names, the mark, the property's schema) for each marked property;
    with `strict`, also marks off a pure ``properties`` path (path None) and at the root."""
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        if MARK in node and (strict or path):
            yield (path or None), node[MARK], node
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                stack.extend(
                    ((*path, name) if path is not None else None, sub)
                    for name, sub in value.items()
                )
            elif key in ONE or key in ONE_MORE:
                stack.append((None, value))
            elif key in LISTS and isinstance(value, list):
                stack.extend((None, sub) for sub in value)
            elif key in MAPS and isinstance(value, dict):
                stack.extend((None, sub) for sub in value.values())
