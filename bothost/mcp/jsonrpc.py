"""JSON-RPC 2.0 as MCP uses it: message shapes, error codes and decoding one message.

Messages stay plain dicts end to end (they are logged, forwarded as event payloads and sent
back verbatim), so this module only classifies and validates them; it never wraps them in
classes. Ids may be strings or integers and are echoed back exactly as received.
"""

from __future__ import annotations

import json
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Errors the client itself produces for a request that never got a real answer.
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001

Message = dict[str, Any]


class McpError(Exception):
    """A JSON-RPC error answer (or one the client made up for a lost request)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)  # people read the message; the code is for logs and code
        self.code = code
        self.message = message
        self.data = data

    @classmethod
    def from_error(cls, error: Any) -> McpError:
        if not isinstance(error, dict):
            return cls(INTERNAL_ERROR, f"malformed error object: {error!r:.200}")
        code = error.get("code")
        if not isinstance(code, int) or isinstance(code, bool):
            code = INTERNAL_ERROR  # a server's bad code must still wake the waiting call
        return cls(code, str(error.get("message", ""))[:2000], error.get("data"))


class ProtocolError(ValueError):
    """Bytes that are not a JSON-RPC message; the reader logs and skips them."""


def request(id: int | str, method: str, params: dict[str, Any] | None = None) -> Message:
    message: Message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: dict[str, Any] | None = None) -> Message:
    message: Message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def result(id: int | str, value: dict[str, Any]) -> Message:
    return {"jsonrpc": "2.0", "id": id, "result": value}


def error(id: int | str | None, code: int, message: str, data: Any = None) -> Message:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": body}


def is_request(message: Message) -> bool:
    return "method" in message and "id" in message


def is_notification(message: Message) -> bool:
    return "method" in message and "id" not in message


def is_response(message: Message) -> bool:
    answered = "result" in message or "error" in message
    return "method" not in message and "id" in message and answered


# ``json.dumps`` with any option builds a ``JSONEncoder`` and runs its Python ``iterencode``
# for each message: ~13,000 of the ~218,000 instructions our client spent on a tools/call
# (issue 19, callgrind). The C encoder those make is made here directly, per message with
# the same options and fresh circular-reference markers, as ``iterencode`` makes it; a
# Python without it gets the same options through ``JSONEncoder``.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_make_encoder = getattr(json.encoder, "c_make_encoder", None)
# default, string encoder (ensure_ascii=False), indent, separators, sort_keys, skipkeys,
# allow_nan: what ``_ENCODER.iterencode`` passes
_OPTIONS = (_ENCODER.default, json.encoder.encode_basestring, None, ":", ",", False, False, True)


def encode(message: Message) -> bytes:
    """One message as a line of compact JSON (stdio framing: no embedded newlines)."""
    if _make_encoder is None:
        return _ENCODER.encode(message).encode() + b"\n"
    return "".join(_make_encoder({}, *_OPTIONS)(message, 0)).encode() + b"\n"


# Python's own JSON scanner, called directly: ``json.loads`` on bytes first guesses the
# encoding among UTF-8/16/32 and ``JSONDecoder.decode`` matches whitespace at both ends with
# regular expressions, together as much again as the parse of an event's line (issue 19).
_scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
JSON_SPACE = " \t\n\r"  # what JSON allows around a value (str.isspace() allows more)
ID_TYPES = (str, int, type(None))  # tuples: isinstance with a union is slower
PARAMS_TYPES = (dict, list)


def decode(data: bytes | str) -> list[Message]:
    """Parse one frame: a message or a batch of them. Raises :class:`ProtocolError`.

    A frame is UTF-8 JSON text starting with its value (MCP's framing); one that is not
    quite (leading space, a byte order mark, another encoding, or not JSON) is read as
    ``json.loads`` reads it, which says what is wrong.

    A key written twice is taken as Python's json takes it (the last wins), unlike HTTP
    bodies (:mod:`bothost.jsondecode`). There a signature binds a sender to the bytes, and
    a reader that takes the first value would see another message than the one we act
    on; here the server writes the whole message itself, with no signature and no reader
    between it and us, so a repeated ``id`` or ``result`` gives it nothing it could not
    write plainly — and checking every object costs 1.9x the decode of a large result on
    the tool-call path (issue 19).
    """
    try:
        text = data.decode() if isinstance(data, bytes) else data
        value, end = _scan(text, 0)
        if end != len(text) and text[end:].strip(JSON_SPACE):
            raise ValueError("extra data")
    except Exception:  # the exact reason: from json.loads, which reads what this may not
        value = _loads(data)
    if type(value) is dict:  # one message, as nearly every line is: no list walked
        # an event's notification ("method" a str, no "id", "params" an object) and an
        # answer to one of our requests (an int id as we number them, a result object, no
        # "method", "params" nor "error") pass with a few look-ups, as check() would pass
        # them; anything else gets every check of check()
        if value.get("jsonrpc") == "2.0":
            if "id" in value:
                if (
                    type(value["id"]) is int
                    and type(value.get("result")) is dict
                    and "method" not in value
                    and "params" not in value
                    and "error" not in value
                ):
                    return [value]
            elif type(value.get("method")) is str and type(value.get("params", value)) is dict:
                return [value]
        check(value)
        return [value]
    items = value if isinstance(value, list) else [value]
    for item in items:
        check(item)
    return items


def check(item: Any) -> None:
    """Raise :class:`ProtocolError` unless ``item`` is one JSON-RPC 2.0 message."""
    if not isinstance(item, dict) or item.get("jsonrpc") != "2.0":
        raise ProtocolError("not a JSON-RPC 2.0 message")
    if "id" in item:
        id_ = item["id"]
        if not isinstance(id_, ID_TYPES) or isinstance(id_, bool):
            raise ProtocolError(f"bad id {id_!r}")
    if "method" in item and not isinstance(item["method"], str):
        raise ProtocolError(f"method is not a string: {item['method']!r:.80}")
    if "params" in item and not isinstance(item["params"], PARAMS_TYPES):
        raise ProtocolError("params is neither an object nor an array")
    if "method" not in item:
        if not ("result" in item or "error" in item):
            raise ProtocolError("neither a request, a notification nor a response")
        if "id" not in item:  # no call could ever claim it
            raise ProtocolError("an answer without an id")


def _loads(data: bytes | str) -> Any:
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"not JSON: {exc}") from None
    except RecursionError:  # nesting deeper than the parser's stack: a hostile line
        raise ProtocolError("not JSON: nested too deeply") from None


def params_of(message: Message) -> dict[str, Any]:
    """A message's params as an object; MCP never uses positional (array) params."""
    params = message.get("params")
    return params if isinstance(params, dict) else {}
