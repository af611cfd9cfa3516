"""The dashboard's permission rules: list, add, remove and test them over the JSON API.

Every request here passed :mod:`security` (loopback or the token), so it is an admin's, like
``bothost rules`` on the command line. The rules live in core (``host.queries`` stores and
lists them, ``host.explain_tool_call`` tests a call); this module only checks the shape of
what the page sends and turns refusals into 400 answers that name the wrong key.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from bothost.plugins.web import body

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
        session = Session(str(address), address, user, admin)
        return web.json_response(await self.host.explain_tool_call(tool, arguments, session))
