"""The dashboard's scheduled jobs: list them, and cancel one (issue 38).

Every request here passed :mod:`security` (loopback or the token), so it is an admin's, like
``bothost schedule`` on the command line: it sees every person's jobs and may cancel any.
The jobs live in core (``host.schedules``, ``host.cancel_schedule``); this module only
checks the shape of what the page sends.
"""

from __future__ import annotations

from aiohttp import web
from bothost.plugins.web.rules import body_of, error

from bothost.api import HostApi

CANCELLED_BY = "web:web"  # who cancelled from the dashboard: the page's operator


class ScheduleRoutes:
    def __init__(self, host: HostApi) -> None:
        self.host = host

    async def list(self, request: web.Request) -> web.Response:
        return web.json_response({"jobs": await self.host.schedules()})

    async def cancel(self, request: web.Request) -> web.Response:
        body = await body_of(request)
        if isinstance(body, web.Response):
            return body
        job_id = body.get("id")
        if isinstance(job_id, bool) or not isinstance(job_id, int):
            return error("id must be the number of a scheduled job")
        try:
            job = await self.host.cancel_schedule(job_id, CANCELLED_BY, admin=True)
        except ValueError as exc:
            return error(str(exc).replace(" of yours (bothost schedule list)", ""), 404)
        return web.json_response({"ok": True, "job": job})
