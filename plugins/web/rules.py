"""The dashboard's permission rules: list, add, remove and test them over the JSON API.

Every request here passed :mod:`security` (loopback or the token), so it is an admin's, like
``bothost rules`` on the command line. The rules live in core (``host.queries`` stores and
lists them, ``host.explain_tool_call`` tests a call); this module only checks the shape of
what the page sends and turns refusals into 400 answers that name the wrong key.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web
from bothost.plugins.web import body

from bothost import identity
from bothost.api import HostApi
from bothost.models import Address, AddressError, Session

CREATED_BY = "web"  # who added a rule from the dashboard (the page's operator)


def error(reason: str, status: int = 400) -> web.Response:
    return web.json_response({"error": reason}, status=status)


async def body_of(request: web.Request) -> dict[str, Any] | web.Response:
    try:
        return await body.json_object(request)
    except body.JsonError as exc:
        return error(exc.reason_text, exc.status_code)


# The JSON type each key of a rule takes. A config file's YAML may write a number for text
# (`args: {port: 22}`), and config reads it as its text; JSON from a script says what it
# sends, so a number where a pattern belongs is refused, not read as "22".
TEXT, FLAG, TEXTS = "a string", "true or false", "a list of strings"
RULE_KEYS = {"tool": TEXT, "action": TEXT, "note": TEXT, "exact": FLAG}
WHO_KEYS = {"users": TEXTS, "channels": TEXTS, "admins": FLAG, "conversation": TEXT}


def type_problem(key: str, value: Any, expected: str) -> str | None:
    """What is wrong with the JSON type of ``value`` at ``key``, or None."""
    if expected == FLAG:
        fits = isinstance(value, bool)
    elif expected == TEXT:
        fits = isinstance(value, str)
    else:
        if not isinstance(value, list):
            return f"{key}: expected {expected}, got {short_json(value)}"
        wrong = next((i for i, v in enumerate(value) if not isinstance(v, str)), None)
        if wrong is None:
            return None
        return f"{key}[{wrong}]: expected a string, got {short_json(value[wrong])}"
    return None if fits else f"{key}: expected {expected}, got {short_json(value)}"


def rule_type_problem(data: dict[str, Any]) -> str | None:
    """The first value of a rule sent as JSON whose type is wrong, named by key; None when
    all fit (unknown keys and wrong values are core's to name)."""
    for key, expected in RULE_KEYS.items():
        if key in data and (problem := type_problem(key, data[key], expected)):
            return problem
    args, who = data.get("args", {}), data.get("who")
    if not isinstance(args, dict):
        return f"args: expected an object, got {short_json(args)}"
    for name, pattern in args.items():
        if problem := type_problem(f"args.{name}", pattern, TEXT):
            return problem
    if who is None:
        return None
    if not isinstance(who, dict):
        return f"who: expected an object, got {short_json(who)}"
    for key, expected in WHO_KEYS.items():
        if who.get(key) is not None and (problem := type_problem(f"who.{key}", who[key], expected)):
            return problem
    return None


def short_json(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:40] + "…"


class RuleRoutes:
    def __init__(self, host: HostApi) -> None:
        self.host = host

    async def list(self, request: web.Request) -> web.Response:
        return web.json_response(await self.host.queries.permission_rules())

    async def add(self, request: web.Request) -> web.Response:
        body = await body_of(request)
        if isinstance(body, web.Response):
            return body
        first = body.pop("first", False)
        if not isinstance(first, bool):
            return error("first must be true or false")
        problem = rule_type_problem(body)
        if problem is not None:
            return error(problem)
        try:
            rule_id = await self.host.queries.add_permission_rule(body, CREATED_BY, first)
        except ValueError as exc:
            return error(str(exc))
        notes = await self.host.queries.allows_above(rule_id)
        return web.json_response({"ok": True, "id": rule_id, "ref": f"#{rule_id}", "notes": notes})

    async def remove(self, request: web.Request) -> web.Response:
        body = await body_of(request)
        if isinstance(body, web.Response):
            return body
        rule_id = body.get("id")
        if isinstance(rule_id, bool) or not isinstance(rule_id, int):
            return error("id must be the number of a stored rule")
        if not await self.host.queries.remove_permission_rule(rule_id):
            return error(f"no stored rule #{rule_id}", 404)
        return web.json_response({"ok": True})

    async def test(self, request: web.Request) -> web.Response:
        body = await body_of(request)
        if isinstance(body, web.Response):
            return body
        tool, arguments = body.get("tool"), body.get("arguments", {})
        user, channel = body.get("user", "web"), body.get("channel", "web:dashboard")
        admin = body.get("admin", True)
        if not isinstance(tool, str) or not tool:
            return error("tool must be a tool name")
        if not isinstance(arguments, dict):
            return error("arguments must be an object")
        if not isinstance(user, str) or not isinstance(admin, bool):
            return error("user must be a string and admin true or false")
        try:
            address = Address.parse(channel) if isinstance(channel, str) else None
        except AddressError:
            address = None
        if address is None:
            return error("channel must be an address such as slack:C0123")
        try:  # a qualified user must be of the channel's platform
            user = identity.session_user(user, address.platform)
        except identity.IdentityError as exc:
            return error(f"user: {exc}")
        session = Session(str(address), address, user, admin)
        return web.json_response(await self.host.explain_tool_call(tool, arguments, session))
