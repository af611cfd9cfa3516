"""Posting pace: at most about one message per second per channel, as Slack asks.

Slack allows bursts but throttles ``chat.postMessage`` to roughly one message per second per
channel and answers 429 beyond that. Each post reserves the next free slot of its channel,
so concurrent senders queue up in order instead of racing into rate limits; the 429 retry
handler on the client covers whatever still slips through.
"""

from __future__ import annotations

import asyncio

POST_INTERVAL = 1.0  # seconds between posts to one channel (Slack's documented pace)
FORGET_AFTER = 300.0  # drop a channel's slot this long after it was last used
MAX_TRACKED = 1000  # tidy the table once it holds this many channels


class Pacer:
    def __init__(self, interval: float = POST_INTERVAL) -> None:
        self.interval = interval
        self.next_slot: dict[str, float] = {}

    async def wait(self, channel: str) -> None:
        """Return when a message may be posted to ``channel``."""
        now = asyncio.get_running_loop().time()
        slot = max(now, self.next_slot.get(channel, 0.0))
        self.next_slot[channel] = slot + self.interval
        if len(self.next_slot) > MAX_TRACKED:
            self.forget(now)
        if slot > now:
            await asyncio.sleep(slot - now)

    def forget(self, now: float) -> None:
        for channel, slot in list(self.next_slot.items()):
            if slot < now - FORGET_AFTER:
                del self.next_slot[channel]
