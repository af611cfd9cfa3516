"""The listener's request handler: a direct route first, else the application.

A plugin may serve ``POST {prefix}{segment}`` past aiohttp's Application
(:func:`bothost.api.direct_post`): no router, no middleware chain, no
``on_response_prepare``. Measured with callgrind (bench/webhook_layers.py), that machinery
was about a fifth of what aiohttp costs per request, which bounded the signed-webhook
intake of issue 19. What the listener's middlewares do for every route is done here
inline, once: the connection guard (busy marking, the body deadline, its 408), the
store-failure 503s; and what the application does itself: ``Expect: 100-continue``, an
``HTTPException`` as its answer, an unexpected exception as a logged 500. The answers made
here pass through the application's ``on_response_prepare``; the handler's own answers get
only what that signal would add for every answer: the headers plugins declared
(:func:`bothost.api.answer_headers`, the web plugin's security headers), from the same
declaration the application's answers take them from, where the handler set none of that name.

Every other request, and a direct path with another method or more than one segment, goes
to the application unchanged (its 404s and 405s included).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.http import HttpVersion11

from bothost.api import DirectHandler, app_key
from bothost.http.listener import BodyTimeoutError, ConnectionGuard

logger = logging.getLogger(__name__)

# the segment a direct route takes: what aiohttp's router matches for a `{name}` part
SEGMENT = re.compile(r"[^{}/]+")

Refusal = Callable[[web.BaseRequest, Exception], web.Response | None]


class Dispatch:
    """The aiohttp server's request handler for the host's application ``app``."""

    def __init__(
        self,
        app: web.Application,
        fallback: Callable[[web.BaseRequest], Awaitable[web.StreamResponse]],
        guard: ConnectionGuard,
        refusal: Refusal,
    ) -> None:
        self.app, self.fallback, self.guard, self.refusal = app, fallback, guard, refusal
        self.routes: dict[str, DirectHandler] = dict(app.get(app_key("DIRECT_ROUTES"), {}))
        self.prefixes = tuple(self.routes)
        self.answer_headers = tuple(app.get(app_key("ANSWER_HEADERS"), {}).items())

    async def __call__(self, request: web.BaseRequest) -> web.StreamResponse:
        if request.method == "POST" and self.prefixes:
            path = request.rel_url.path_safe  # decoded but for %2F and %25, as the router
            if path.startswith(self.prefixes):
                for prefix, handler in self.routes.items():
                    segment = path[len(prefix) :]
                    if path.startswith(prefix) and SEGMENT.fullmatch(segment):
                        if "%" in segment:  # as aiohttp's router unquotes a `{name}` part
                            segment = segment.replace("%2F", "/").replace("%25", "%")
                        assert isinstance(request, web.Request)  # the app's request factory
                        return await self.serve(request, handler, segment)
        return await self.fallback(request)

    async def serve(
        self, request: web.Request, handler: DirectHandler, segment: str
    ) -> web.StreamResponse:
        response: web.StreamResponse
        if request.headers.get("Expect") is not None:  # before the guard, as the app does
            try:
                await expect(request)
            except web.HTTPException as exc:
                await self.app.on_response_prepare.send(request, exc)
                raise
        guard = self.guard
        timer = guard.enter(request)
        try:
            answer = await handler(request, segment)
        except BodyTimeoutError as exc:
            response = guard.late(exc)
        except web.HTTPException as exc:  # aiohttp sends it as the answer
            await self.app.on_response_prepare.send(request, exc)
            raise
        except Exception as exc:
            refused = self.refusal(request, exc)
            if refused is None:
                logger.exception("Error handling request %s %s", request.method, request.path)
                refused = web.json_response({"error": "internal error"}, status=500)
            response = refused
        else:
            headers = answer.headers
            for name, value in self.answer_headers:
                headers.setdefault(name, value)
            return answer
        finally:
            guard.leave(request, timer)
        await self.app.on_response_prepare.send(request, response)
        return response


async def expect(request: web.Request) -> None:
    """What aiohttp's router does for an ``Expect`` header: ``100 Continue`` for
    ``100-continue`` on HTTP/1.1, 417 for anything else there."""
    value = request.headers.get("Expect", "")
    if request.version == HttpVersion11:
        if value.lower() != "100-continue":
            raise web.HTTPExpectationFailed(text=f"Unknown Expect: {value}")
        await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        request.writer.output_size = 0  # the answer's own size starts after this line
        await request.writer.drain()


def install(
    server: web.Server, app: web.Application, guard: ConnectionGuard, refusal: Refusal
) -> Dispatch | None:
    """Put a :class:`Dispatch` in front of the application on ``server`` (before it accepts
    a connection: each connection takes the handler when made); None without direct routes."""
    if not app.get(app_key("DIRECT_ROUTES")):
        return None
    dispatch = Dispatch(app, server.request_handler, guard, refusal)
    server.request_handler = dispatch
    return dispatch
