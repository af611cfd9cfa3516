"""The ``webhook`` platform: signed POSTs to other systems (``webhook:<target>``).

Targets are ``platforms.webhook.targets.<name>: {url, secret}``; a target without its own
secret is signed with ``platforms.webhook.secret``. Every request is signed as Standard
Webhooks (see :mod:`signing`) with a message id that stays the same across retries, so the
receiver can drop repeats. Connection errors, timeouts, 429 and 5xx are retried with
doubling delays, never sooner than the receiver's ``Retry-After``; one longer than
``MAX_WAIT`` fails the attempt at once, and the URL is not called again until then. Any
other 4xx is final. When every attempt fails the send raises, so the
tick keeps the briefing's events pending and tries again at a later tick. Webhook senders
cannot answer questions: ``ask`` is always None (which means no).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
import uuid
from collections import Counter
from typing import TYPE_CHECKING, Any

from bothost.plugins.web.callback import CallbackRefusedError
from bothost.plugins.web.config import webhook_target_problem
from bothost.plugins.web.signing import sign_headers

from bothost.api import HostApi
from bothost.models import Address, Briefing
from bothost.platform import Question, retry_after_seconds
from bothost.redact import mask_url, redact

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger(__name__)

ATTEMPTS = 4  # one try and three retries, inside the tick's 60 s delivery deadline
FIRST_DELAY = 0.5  # seconds before the first retry, doubling after each
REQUEST_TIMEOUT = 10.0  # seconds per attempt
RETRY_STATUSES = {408, 425, 429}  # plus every 5xx
# Longest Retry-After waited inside one delivery: with the attempts' own time it stays in the
# tick's 60 s deadline; a longer one fails the attempt and the target is left alone until then.
MAX_WAIT = 15.0


class DeliveryError(Exception):
    """A signed POST did not get a 2xx (after retries, where retrying made sense);
    ``retry_after`` is the wait the receiver asked for, when it asked for a long one."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


async def post_signed(
    client: aiohttp.ClientSession,
    url: str,
    secret: str,
    payload: dict[str, Any],
    msg_id: str,
    *,
    attempts: int | None = None,
    first_delay: float | None = None,
    follow_redirects: bool = True,
) -> int:
    """POST ``payload`` as signed JSON; the 2xx status, or :class:`DeliveryError`.

    ``follow_redirects=False`` for a URL a sender chose (a callback): where a redirect
    points was never checked, so a 3xx is a final answer."""
    import aiohttp  # here, not at the top: every CLI command registers this platform

    body = json.dumps(payload, ensure_ascii=False, default=str).encode()
    attempts = ATTEMPTS if attempts is None else attempts
    delay = FIRST_DELAY if first_delay is None else first_delay
    last = "no attempt"
    shown = mask_url(url)  # errors and logs name the target, never its credentials
    for attempt in range(1, attempts + 1):
        headers = {"Content-Type": "application/json", **sign_headers(secret, msg_id, body)}
        try:
            async with client.post(
                url,
                data=body,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT),
                allow_redirects=follow_redirects,
            ) as resp:
                await resp.read()
                if 200 <= resp.status < 300:
                    return resp.status
                last = f"HTTP {resp.status}"
                if resp.status < 500 and resp.status not in RETRY_STATUSES:
                    raise DeliveryError(f"{shown} answered {last}")
                asked = retry_after_seconds(resp.headers.get("Retry-After"))
                if asked is not None and asked > MAX_WAIT:
                    raise DeliveryError(
                        f"{shown} answered {last} with Retry-After {asked:g} s, longer than a "
                        "delivery waits; a later attempt retries after that",
                        retry_after=asked,
                    )
                if asked is not None:
                    delay = max(delay, asked)  # never earlier than the receiver asked
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, CallbackRefusedError):  # refused here: final
                raise DeliveryError(f"{shown}: {exc.os_error.strerror}") from None
            last = redact(f"{type(exc).__name__}: {exc}")
        except (aiohttp.ClientError, TimeoutError) as exc:
            last = redact(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
        if attempt < attempts:
            logger.info("webhook %s to %s: %s; retrying in %.1f s", msg_id, shown, last, delay)
            await asyncio.sleep(delay)
            delay *= 2
    raise DeliveryError(f"{shown}: {last} after {attempts} attempts")


def briefing_payload(briefing: Briefing) -> dict[str, Any]:
    return {
        "type": "briefing",
        "id": briefing.id,
        "title": briefing.title,
        "text": briefing.text,
        "items": [dataclasses.asdict(i) for i in briefing.items],
        "low_count": briefing.low_count,
        "muted_count": briefing.muted_count,
        "muted_summary": briefing.muted_summary,
        "low_summary": briefing.low_summary,
        "footer": briefing.footer,
        "event_ids": briefing.event_ids,
        "created_at": briefing.created_at,
    }


class WebhookPlatform:
    name = "webhook"

    def __init__(self) -> None:
        self.host: HostApi | None = None
        self.client: aiohttp.ClientSession | None = None
        self.counters: Counter[tuple[str, ...]] = Counter()
        self.held_until: dict[str, float] = {}  # URL → when it asked to be called again

    def enabled(self, host: HostApi) -> bool:
        config = host.config.platforms.webhook
        return bool(config.secret or config.targets)

    def target_problem(self, channel: str, config: Any) -> str | None:
        """Why ``tick.deliver_to: webhook:<channel>`` cannot work, or None."""
        return webhook_target_problem(channel, config)

    async def start(self, host: HostApi) -> None:
        self.host = host

    def bind(self, host: HostApi) -> None:
        """Attach to ``host`` when routes are served without the platform being started."""
        if self.host is None:
            self.host = host

    async def stop(self) -> None:
        if self.client is not None:
            await self.client.close()
            self.client = None

    def health(self) -> dict[str, Any]:
        config = self.bound().config.platforms.webhook
        return {"inbound": bool(config.secret), "targets": sorted(config.targets)}

    def bound(self) -> HostApi:
        if self.host is None:
            raise DeliveryError("the webhook platform is not bound to a host")
        return self.host

    def session(self) -> aiohttp.ClientSession:
        if self.client is None or self.client.closed:
            import aiohttp

            self.client = aiohttp.ClientSession()
        return self.client

    async def post(
        self, url: str, secret: str, payload: dict[str, Any], msg_id: str, label: str
    ) -> str:
        try:
            left = self.held_until.get(url, 0.0) - time.monotonic()
            if left > 0:  # it asked for a long pause (Retry-After): not called before then
                raise DeliveryError(
                    f"{mask_url(url)}: not tried: it asked not to be called for {left:.0f} s "
                    "more (Retry-After)"
                )
            self.held_until.pop(url, None)
            try:
                status = await post_signed(self.session(), url, secret, payload, msg_id)
            except DeliveryError as exc:
                if exc.retry_after is not None:
                    self.held_until[url] = time.monotonic() + exc.retry_after
                raise
        except DeliveryError:
            self.counters["webhook_out", label, "failed"] += 1
            raise
        self.counters["webhook_out", label, "delivered"] += 1
        return f"{msg_id} HTTP {status}"

    async def to_target(self, target: str, payload: dict[str, Any], msg_id: str) -> str:
        config = self.bound().config.platforms.webhook
        found = config.targets.get(target)
        if found is None or not found.url:
            raise DeliveryError(f"platforms.webhook.targets.{target}: no such target")
        secret = found.secret or config.secret
        if not secret:
            raise DeliveryError(f"platforms.webhook.targets.{target}.secret: needed to sign")
        return await self.post(found.url, secret, payload, msg_id, target)

    async def send(self, address: Address, text: str, **kwargs: Any) -> str:
        payload = {"type": "message", "text": text, "address": str(address)}
        return await self.to_target(address.channel, payload, f"msg_{uuid.uuid4().hex}")

    async def send_briefing(self, address: Address, briefing: Briefing) -> str:
        # the same id on every retry and every later tick, so the receiver can dedupe
        msg_id = briefing.key or (
            f"brf_{briefing.id}" if briefing.id is not None else f"brf_{uuid.uuid4().hex}"
        )
        return await self.to_target(address.channel, briefing_payload(briefing), msg_id)

    async def ask(self, address: Address, question: Question) -> Any:
        return None
