"""Inbound webhooks: ``POST /webhook/message`` and ``POST /webhook/events/{source}``.

Both are Standard Webhooks requests signed with ``platforms.webhook.secret`` and exist only
while that secret is set (404 otherwise). Order of checks, cheapest and least revealing
first: size (413, before reading more than the limit), signature headers and timestamp
(401 / 400), the id's length (400), JSON through :mod:`bothost.jsondecode` (400: not
JSON, too deep, a lone surrogate, NaN; a sender retries a 5xx for days, so a body we cannot
use must never get one), and the source's bound (429 with ``Retry-After`` while it has
``tick.max_pending_per_source`` events pending; nothing recorded, so the retry counts). A
``webhook-id`` is processed once: it is recorded before the answer, and the same id again
is answered 200 ``{"duplicate": true}``. A message's id is its delivery id, taken by the
host (``host.take_delivery``, in the store) before its turn. An event's id is recorded by
the host in the same transaction as the event (``host.ingest_webhook_event``, which joins
the queue's group commit: one shared store round trip per burst of webhooks, not one per
step, and serialises one id's concurrent requests in-process), so a 2xx means both are
committed and a failure records neither.
A message sender is not an admin; its reply comes in the response, or — with
``callback_url`` — is POSTed there later, signed with the same secret, to a public address
only unless ``platforms.webhook.callback_allow`` lists its network (:mod:`callback`: the
address is checked at the request and again on the socket that connects, redirects are
not followed).
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections import Counter
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web
from bothost.plugins.web import callback
from bothost.plugins.web.config import NAME_PATTERN, NAME_RULE, WebhookConfig
from bothost.plugins.web.outbound import DeliveryError, WebhookPlatform, post_signed
from bothost.plugins.web.signing import MalformedError, SignatureError, TimestampError, verify

from bothost import jsondecode
from bothost.api import MAX_EVENT_TYPE, EventRejectedError, HostApi, SourceHeldError, direct_post
from bothost.models import Address, IncomingMessage

logger = logging.getLogger(__name__)

ID_RETENTION = 7 * 24 * 3600  # senders retry for days (Svix: ~5); keep ids a bit longer
MAX_FIELD = 200  # characters of user / channel (a type: MAX_EVENT_TYPE, every producer's)
MAX_ID = 256  # characters of webhook-id; Standard Webhooks ids are short (msg_ + a ulid)
# A bound on how much larger a value gets when re-encoded as compact JSON: only numbers can
# grow (strings keep or lose escapes, whitespace goes), and a float literal of n >= 3 bytes
# re-encodes to at most 24 ("9e15" -> "9000000000000000.0", "1e400" -> "Infinity"; a
# repr is never longer than "-2.2250738585072014e-308"), under 8x with its separator. So
# a body of at most 1/8 of the payload limit cannot hold a payload over it, and the
# payload need not be encoded again just to be measured.
MAX_GROWTH = 8


# the header as aiohttp would build it from content_type and charset, given whole: setting
# those two parses and rebuilds the header per response (the security headers come from the
# listener, on the direct route too: bothost.api.answer_headers)
JSON_HEADERS = {"Content-Type": "application/json; charset=utf-8"}


def answer(body: bytes) -> web.Response:
    """A 200 with a JSON body given as bytes: the answers sent per webhook are small and
    fixed in shape, and encoding them through json_response was a measurable part of the
    cost of accepting one (issue 19)."""
    return web.Response(body=body, headers=JSON_HEADERS)


DUPLICATE = b'{"duplicate": true}'
DROPPED = b'{"accepted": true, "dropped": true}'


def error(status: int, reason: str, **extra: Any) -> web.Response:
    return web.json_response({"error": reason, **extra}, status=status)


class WebhookRoutes:
    def __init__(self, host: HostApi, platform: WebhookPlatform) -> None:
        self.host, self.platform = host, platform
        self.replies: set[asyncio.Task[None]] = set()
        self.counters: Counter[tuple[str, ...]] = Counter()
        self.callbacks: aiohttp.ClientSession | None = None  # made at the first callback

    def add(self, app: web.Application) -> None:
        app.router.add_post("/webhook/message", self.message)
        app.router.add_post("/webhook/events/{source}", self.event)
        # and served by the listener itself, past the app's router, middlewares and signals,
        # which cost a fifth of aiohttp's own work per request (issue 19; docs/webhooks.md)
        direct_post(app, "/webhook/events/", self.event_at)
        app.on_shutdown.append(self.shutdown)

    @property
    def config(self) -> WebhookConfig:
        return self.host.config.platforms["webhook"]  # by key: attribute access tries first

    async def shutdown(self, app: web.Application) -> None:
        for task in list(self.replies):
            task.cancel()
        await asyncio.gather(*self.replies, return_exceptions=True)
        if self.callbacks is not None:
            await self.callbacks.close()

    def callback_allow(self) -> list[callback.Network]:
        """``platforms.webhook.callback_allow`` as networks (checked when config loaded)."""
        return callback.networks(self.config.callback_allow)

    def callback_session(self) -> aiohttp.ClientSession:
        """The client for replies to ``callback_url``: it connects to allowed addresses only
        (see :mod:`bothost.plugins.web.callback`); the platform's own is for targets the
        operator configured."""
        if self.callbacks is None or self.callbacks.closed:
            self.callbacks = callback.session(self.callback_allow())
        return self.callbacks

    # --- the shared front half: size, signature, JSON, once-only ---------------------------

    async def read_body(self, request: web.Request, limit: int) -> bytes | None:
        """The body, or None when it is larger than ``limit`` (``platforms.webhook.max_body``)."""
        length = request.content_length
        if length is not None:
            if length > limit:
                return None
            # aiohttp reads exactly Content-Length bytes: within the limit, read it whole
            return await request.read()
        chunks, size = [], 0  # chunked: count as it arrives, so a long body stops at the limit
        async for chunk in request.content.iter_chunked(64 * 1024):
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
        return b"".join(chunks)

    async def signed_json(
        self, request: web.Request, route: str
    ) -> tuple[str, dict[str, Any]] | web.Response:
        """The verified ``webhook-id`` and JSON object, or the error response to send."""
        config = self.config
        secret = config.secret
        if not secret:
            raise web.HTTPNotFound()
        body = await self.read_body(request, config.max_body)
        if body is None:
            self.counters[route, "too_large"] += 1
            return error(413, f"body larger than {config.max_body} bytes")
        try:
            msg_id = verify(secret, request.headers, body)
        except SignatureError as exc:
            self.counters[route, "bad_signature"] += 1
            return error(401, str(exc))
        except TimestampError as exc:
            self.counters[route, "bad_timestamp"] += 1
            return error(400, str(exc))
        except MalformedError as exc:  # a signature header given twice
            self.counters[route, "bad_header"] += 1
            return error(400, str(exc))
        if len(msg_id) > MAX_ID:
            self.counters[route, "bad_id"] += 1
            return error(400, f"webhook-id is longer than {MAX_ID} characters")
        try:
            data = jsondecode.decode_object(body, max_bytes=config.max_body)
        except jsondecode.JsonInputError as exc:
            self.counters[route, "bad_json"] += 1
            return error(400, str(exc))
        return msg_id, data

    def duplicate(self, route: str) -> web.Response:
        self.counters[route, "duplicate"] += 1
        return answer(DUPLICATE)

    # --- POST /webhook/events/{source} ----------------------------------------------------

    async def event(self, request: web.Request) -> web.Response:
        """The route through the app (a plain application's, a test's)."""
        return await self.event_at(request, request.match_info["source"])

    async def event_at(self, request: web.Request, source: str) -> web.Response:
        """``POST /webhook/events/{source}``: the listener calls this directly."""
        checked = await self.signed_json(request, "events")
        if isinstance(checked, web.Response):
            return checked
        msg_id, data = checked
        if not NAME_PATTERN.fullmatch(source):  # `..` is no name: never a path's part
            return error(400, f"source must be {NAME_RULE}")
        type_ = data.get("type", "webhook")
        payload = data.get("payload", data)
        if not isinstance(type_, str) or not type_ or len(type_) > MAX_EVENT_TYPE:
            return error(400, f"type must be a non-empty string of at most {MAX_EVENT_TYPE} chars")
        if not isinstance(payload, dict):
            return error(400, "payload must be a JSON object")
        limit = self.host.max_event_payload
        length = request.content_length  # the body's size: signed_json read all of it
        if (length is None or length * MAX_GROWTH > limit) and payload_bytes(payload) > limit:
            self.counters["events", "too_large"] += 1
            return error(413, f"payload larger than the queue's {limit} bytes")
        try:
            receipt = await self.host.ingest_webhook_event(msg_id, source, type_, payload)
        except EventRejectedError as exc:  # this event can never be stored: not a 5xx
            self.counters["events", "rejected"] += 1
            return error(400, str(exc))
        except SourceHeldError as exc:  # the source's bound: come back after a tick
            self.counters["events", "held"] += 1
            return web.json_response(
                {"error": str(exc)}, status=429, headers={"Retry-After": str(exc.retry_after)}
            )
        if receipt.duplicate:
            return self.duplicate("events")
        self.counters["events", "accepted" if receipt.event_id else "dropped"] += 1
        if receipt.event_id is None:  # an event_received hook dropped it (or the queue did)
            return answer(DROPPED)
        return answer(b'{"accepted": true, "event_id": %d}' % receipt.event_id)

    # --- POST /webhook/message ------------------------------------------------------------

    async def message(self, request: web.Request) -> web.Response:
        checked = await self.signed_json(request, "message")
        if isinstance(checked, web.Response):
            return checked
        msg_id, data = checked
        problem = message_problem(data)
        if problem:
            return error(400, problem)
        user, text = data["user"], data["text"]
        channel = (data.get("channel") or user).replace(":", "_")
        callback_url = data.get("callback_url")
        if callback_url:  # before the id is claimed: a refused request has not run
            refused = await callback.problem(callback_url, self.callback_allow())
            if refused:
                self.counters["message", "callback_refused"] += 1
                return error(400, refused)
        message = IncomingMessage(
            address=Address("webhook", channel),
            text=text,
            user=user,
            is_admin=False,
            meta={"webhook_id": msg_id},
            delivery=msg_id,
        )
        # the host takes the id before the turn: a retry mid-turn is a duplicate; and taking
        # is one insert that does nothing for a known id, so of hosts sharing a database
        # that got the same id only one runs it
        if not await self.host.take_delivery(message, ID_RETENTION):
            return self.duplicate("message")
        self.counters["message", "accepted"] += 1
        if callback_url:
            task = asyncio.ensure_future(self.reply_later(message, callback_url, msg_id))
            self.replies.add(task)
            task.add_done_callback(self.replies.discard)
            return web.json_response({"accepted": True, "id": msg_id}, status=202)
        try:
            reply = await self.host.handle_message(message, platform=self.platform)
        except Exception:
            await self.host.release_delivery(message)  # nothing answered: a retry may run it
            raise
        return web.json_response({"id": msg_id, "reply": reply.text, "outcome": reply.outcome})

    async def reply_later(self, message: IncomingMessage, url: str, msg_id: str) -> None:
        try:
            reply = await self.host.handle_message(message, platform=self.platform)
            payload = {
                "type": "reply",
                "in_reply_to": msg_id,
                "text": reply.text,
                "outcome": reply.outcome,
                "user": message.user,
                "channel": message.address.channel,
            }
            secret = self.config.secret
            if not secret:  # never here: the request was verified with it
                raise DeliveryError("platforms.webhook.secret: needed to sign the reply")
            await post_signed(
                self.callback_session(),
                url,
                secret,
                payload,
                f"rpl_{uuid.uuid4().hex}",
                follow_redirects=callback.FOLLOW_REDIRECTS,
            )
            self.counters["callback", "delivered"] += 1
        except DeliveryError as exc:
            self.counters["callback", "failed"] += 1
            logger.warning("reply to webhook %s could not be delivered: %s", msg_id, exc)
        except Exception:  # a background reply fails alone
            self.counters["callback", "failed"] += 1
            logger.exception("reply to webhook %s failed", msg_id)


def payload_bytes(payload: dict[str, Any]) -> int:
    """The payload's size as the queue measures it: compact UTF-8 JSON."""
    return len(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode())


def message_problem(data: dict[str, Any]) -> str | None:
    """Why a ``/webhook/message`` body is unusable, or None."""
    text, user = data.get("text"), data.get("user")
    if not isinstance(text, str) or not text.strip():
        return "text must be a non-empty string"
    if not isinstance(user, str) or not user.strip() or len(user) > MAX_FIELD:
        return f"user must be a non-empty string of at most {MAX_FIELD} characters"
    channel = data.get("channel")
    if channel is not None and (
        not isinstance(channel, str) or not channel.strip() or len(channel) > MAX_FIELD
    ):
        return f"channel must be a non-empty string of at most {MAX_FIELD} characters"
    callback = data.get("callback_url")
    if callback is not None:
        try:
            parts = urlsplit(callback) if isinstance(callback, str) else None
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            return "callback_url must be an http(s) URL"
    return None
