"""A raw stdio MCP server whose resources change, for the subscription tests.

Resources: ``note://a`` ("Note A"), ``note://b``, ``img://pixel`` (a blob). It declares
``resources.subscribe`` (``note://b`` holds ``NOTE_B`` when set) unless ``SUBSCRIBE=0`` and ``logging`` unless ``LOGGING=0``. Each
``resources/subscribe``, ``resources/unsubscribe`` and ``logging/setLevel`` it gets is
appended to the file ``RECORD`` as ``METHOD JSON-PARAMS`` lines. Tools: ``change`` (``uri``,
``text``) sets a note's text and sends ``notifications/resources/updated`` for it; ``add``
(``uri``) lists one more note and sends ``notifications/resources/list_changed``; ``exit``
ends the process (a crash, to the client).
"""

from __future__ import annotations

import json
import os
import sys

from lines import serve, write

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
NOTES = {"note://a": "first text of A", "note://b": os.environ.get("NOTE_B", "first text of B")}
TITLES = {"note://a": "Note A"}
RECORDED = ("resources/subscribe", "resources/unsubscribe", "logging/setLevel")


def capabilities() -> dict:
    caps: dict = {"tools": {}, "resources": {"listChanged": True}}
    if os.environ.get("SUBSCRIBE", "1") == "1":
        caps["resources"]["subscribe"] = True
    if os.environ.get("LOGGING", "1") == "1":
        caps["logging"] = {}
    return caps


def record(method: str, params: dict) -> None:
    with open(os.environ["RECORD"], "a") as file:
        file.write(f"{method} {json.dumps(params, sort_keys=True)}\n")


def notify(method: str, params: dict | None = None) -> None:
    write({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})


def listed() -> list[dict]:
    notes = [
        {"uri": uri, "name": uri.split("//")[1], "mimeType": "text/plain"}
        | ({"title": TITLES[uri]} if uri in TITLES else {})
        for uri in NOTES
    ]
    return [*notes, {"uri": "img://pixel", "name": "pixel", "mimeType": "image/png"}]


def call(name: str, arguments: dict) -> dict:
    if name == "change":
        NOTES[arguments["uri"]] = arguments["text"]
        notify("notifications/resources/updated", {"uri": arguments["uri"]})
    elif name == "add":
        NOTES[arguments["uri"]] = "new"
        notify("notifications/resources/list_changed")
    elif name == "exit":
        sys.exit(3)
    return {"content": [{"type": "text", "text": "done"}]}


def result(method: str, params: dict) -> dict:
    if method in RECORDED:
        record(method, params)
        return {}
    if method == "initialize":
        return {
            "protocolVersion": params["protocolVersion"],
            "capabilities": capabilities(),
            "serverInfo": {"name": "watched-server", "version": "1"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {
            "tools": [
                {"name": name, "inputSchema": {"type": "object"}}
                for name in ("change", "add", "exit")
            ]
        }
    if method == "tools/call":
        return call(params["name"], params.get("arguments") or {})
    if method == "resources/list":
        return {"resources": listed()}
    if method == "resources/templates/list":
        return {"resourceTemplates": [{"uriTemplate": "note://{name}", "name": "any note"}]}
    if method == "resources/read":
        uri = params.get("uri", "")
        if uri == "img://pixel":
            return {"contents": [{"uri": uri, "mimeType": "image/png", "blob": PIXEL}]}
        if uri not in NOTES:
            raise LookupError(f"Resource not found: {uri}")
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": NOTES[uri]}]}
    raise NotImplementedError(method)


if __name__ == "__main__":
    serve(result, invalid=(LookupError,))
