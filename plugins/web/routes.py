"""Putting the web plugin's routes on the host's app, each behind the right checks.

The page, its API, ``/metrics`` and ``/media`` go through :class:`security.Access`; the
webhook routes authenticate by signature instead; ``/openapi.json`` and the static files
are public (they describe and render, they hold nothing). The platform objects the host
registered are looked up here, so routes and platforms share one hub and one set of
counters; on shutdown the hub ends every live stream, which lets the server stop at once.
"""

from __future__ import annotations

from importlib import metadata, resources
from pathlib import Path
from typing import TypeVar

from aiohttp import web
from bothost.plugins.web import metrics, openapi, security
from bothost.plugins.web.chat import ChatRoutes
from bothost.plugins.web.media import MediaRoutes
from bothost.plugins.web.outbound import WebhookPlatform
from bothost.plugins.web.platform import WebPlatform
from bothost.plugins.web.security import Access
from bothost.plugins.web.webhooks import WebhookRoutes

from bothost.api import HOST, HostApi, answer_headers

P = TypeVar("P", WebPlatform, WebhookPlatform)


def platform(host: HostApi, name: str, kind: type[P]) -> P:
    found = host.platform(name)
    made = found if isinstance(found, kind) else kind()  # a test's bare app: no platform hook
    made.bind(host)
    return made


def version() -> str:
    try:
        return metadata.version("bothost")
    except metadata.PackageNotFoundError:  # running from a checkout that was never installed
        return "0"


def setup(app: web.Application) -> None:
    host = app[HOST]
    web_platform = platform(host, "web", WebPlatform)
    webhook_platform = platform(host, "webhook", WebhookPlatform)
    access = Access(host)
    ChatRoutes(host, web_platform, access).add(app)
    inbound = WebhookRoutes(host, webhook_platform)
    inbound.add(app)

    async def metrics_route(request: web.Request) -> web.Response:
        text = await metrics.render(host, web_platform, webhook_platform, inbound)
        return web.Response(body=text.encode(), headers={"Content-Type": metrics.CONTENT_TYPE})

    doc = openapi.document(version())

    async def openapi_route(request: web.Request) -> web.Response:
        return web.json_response(doc)

    app.router.add_get("/metrics", access.guard(metrics_route))
    app.router.add_get("/media/{file}", access.guard(MediaRoutes(host).get))
    app.router.add_get("/openapi.json", openapi_route)
    static = Path(str(resources.files("bothost.plugins.web") / "static"))
    app.router.add_static("/static/", static, show_index=False, follow_symlinks=False)

    async def close_streams(app: web.Application) -> None:
        web_platform.hub.close()

    app.on_shutdown.append(close_streams)
    answer_headers(app, security.DEFAULT_HEADERS)  # the listener's own answers too
