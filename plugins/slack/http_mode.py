"""Slack's HTTP Events API: ``POST /slack/events`` on the host's own HTTP app.

Used when ``platforms.slack.mode`` is ``http`` (Slack must reach the host at a public
HTTPS URL). The request is handed to the running platform's bolt app, whose request
verification checks ``X-Slack-Signature`` against the signing secret and the timestamp
window (a forged or stale request gets 401). The signature is checked here first, before
bolt parses the body: bolt parses JSON and form bodies as it builds its request, and reads
the timestamp as an int, so a request anybody can send (a body nested 100,000 levels deep, a
timestamp of "soon") would otherwise get a 500 and write a traceback into the log. A
signed body bolt cannot parse gets 400 and a warning (Slack sends none; a 500 would page
someone). Without a running Slack platform in HTTP mode the route answers 404, so nothing
is accepted by accident.

The route is added on every host, Slack or not, so slack_bolt (with slack_sdk: a third of
a ``bothost run`` start's imports) is imported by the first request the route takes, not
when the route is added.
"""

from __future__ import annotations

import logging
import re

from aiohttp import web
from bothost.plugins.slack.platform import SlackPlatform

from bothost.api import HOST

logger = logging.getLogger(__name__)

PATH = "/slack/events"
# Slack's X-Slack-Request-Timestamp: Unix seconds; a longer or signed number is not one
TIMESTAMP = re.compile(r"[0-9]{1,12}")


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

    if not signed_by_slack(platform.config.signing_secret or "", request, await request.read()):
        return web.json_response({"error": "invalid request"}, status=401)
    try:  # bolt parses the body here; Slack never signs one it cannot, but a 500 helps nobody
        bolt_request = await to_bolt_request(request)
    except (RecursionError, ValueError) as error:
        logger.warning("Slack HTTP mode: a signed body that does not parse: %s", error)
        return web.json_response({"error": "the body does not parse"}, status=400)
    return await to_aiohttp_response(await platform.bolt.async_dispatch(bolt_request))


def signed_by_slack(secret: str, request: web.Request, body: bytes) -> bool:
    """Whether `body` carries Slack's signature, made within its five-minute window."""
    from slack_sdk.signature import SignatureVerifier

    timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
    signature = request.headers.get("X-Slack-Signature")
    if not secret or not TIMESTAMP.fullmatch(timestamp):
        return False
    return SignatureVerifier(secret).is_valid(body, timestamp, signature)
