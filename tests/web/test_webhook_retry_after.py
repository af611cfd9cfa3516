"""Briefings to a webhook target that answers 429 (or 503) with ``Retry-After``.

The receiver on 127.0.0.1 says how long to wait; a short wait is honoured before the retry
(not the sender's own shorter backoff), a wait longer than a delivery may take fails the
attempt at once naming it, and until that time the target is not called again: the tick's
next attempt comes after it, so nothing is lost and nothing retries early.
"""

from __future__ import annotations

import time

import pytest
from aiohttp import web
from bothost.plugins.web import outbound

from tests.helpers import make_host
from tests.web.conftest import host_config
from tests.web.test_webhooks import Receiver, sample_briefing


class Limited(Receiver):
    """A receiver answering its first requests 429 with the given Retry-After."""

    def __init__(self, secret, retry_after: str, limited: int = 1):
        super().__init__(secret, fail_first=limited, fail_status=429)
        self.retry_after = retry_after
        self.times: list[float] = []

    async def handle(self, request):
        self.times.append(time.monotonic())
        answer = await super().handle(request)
        if answer.status == 429:
            return web.Response(status=429, headers={"Retry-After": self.retry_after})
        return answer


async def delivering(home, tmp_path, secret, receiver):
    host = make_host(
        home,
        host_config(
            tmp_path,
            secret,
            platforms={"webhook": {"secret": secret, "targets": {"ops": {"url": receiver.url}}}},
        ),
    )
    await host.start(mcp=False, tick=False)
    return host


async def test_a_short_retry_after_is_waited_before_the_retry(home, tmp_path, secret):
    async with Limited(secret, "1") as receiver:
        host = await delivering(home, tmp_path, secret, receiver)
        try:
            await host.deliver("webhook:ops", sample_briefing())
        finally:
            await host.stop()
    assert receiver.attempts == 2 and len(receiver.received) == 1
    first, second = receiver.times
    assert second - first >= 1.0, "retried before the receiver's Retry-After"


async def test_a_long_retry_after_fails_at_once_and_holds_the_target_until_then(
    home, tmp_path, secret
):
    async with Limited(secret, "600") as receiver:
        host = await delivering(home, tmp_path, secret, receiver)
        try:
            with pytest.raises(outbound.DeliveryError, match="Retry-After 600"):
                await host.deliver("webhook:ops", sample_briefing())
            assert receiver.attempts == 1  # no retry inside this delivery
            with pytest.raises(outbound.DeliveryError, match="asked not to be called"):
                await host.deliver("webhook:ops", sample_briefing())
            assert receiver.attempts == 1  # a later attempt before the time: not sent
        finally:
            await host.stop()
