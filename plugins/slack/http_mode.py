"""Slack's HTTP Events API: ``POST /slack/events`` on the host's own HTTP app.

Used when ``platforms.slack.mode`` is ``http`` (Slack must reach the host at a public
HTTPS URL). The request is handed to the running platform's bolt app, whose request
verification checks ``X-Slack-Signature`` against the signing secret and the timestamp
window (a forged or stale request gets 401). Without a running Slack platform in HTTP mode
the route answers 404, so nothing is accepted by accident.

The route is added on every host, Slack or not, so slack_bolt (with slack_sdk: a third of
a ``bothost run`` start's imports) is imported by the first request the route takes, not
when the route is added.
"""

from __future__ import annotations

from aiohttp import web
from bothost.plugins.slack.platform import SlackPlatform

from bothost.api import HOST

PATH = "/slack/events"


def add_routes(app: web.Application) -> None:
    app.router.add_post(PATH, handle)


async def handle(request: web.Request) -> web.Response:
    platform = request.app[HOST].platform("slack")
    if (
        not isinstance(platform, SlackPlatform)
        or platform.bolt is None  # bolt: set by start
        or platform.config.mode != "http"
    ):
        raise web.HTTPNotFound(text="Slack HTTP mode is not enabled (platforms.slack.mode)")
    from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request

    bolt_request = await to_bolt_request(request)
    return await to_aiohttp_response(await platform.bolt.async_dispatch(bolt_request))
