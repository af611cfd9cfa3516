"""A target that stops answering costs one deadline per tick, not one per briefing.

Slack hanging (no answer, no error) makes every delivery to it wait out the delivery
deadline. Briefings that failed there stay pending for the next ticks, so a tick re-sends
several of them; before, each waited its own deadline in turn — with Slack down for an hour
a tick spent minutes waiting on it while the other targets' deliveries queued behind. Now a
target that timed out is not waited on again in the same tick: its other deliveries count a
failed attempt (so each briefing still reaches ``max_attempts`` and is reported) and the
other targets get theirs at once.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from zoneinfo import ZoneInfo

from bothost.events import delivery, feedback
from bothost.events.tick import run_tick
from bothost.models import Event
from tests.helpers import ingest_one

MORNING = datetime(2026, 12, 2, 8, 0, tzinfo=ZoneInfo("Europe/Zurich")).timestamp()
DEADLINE = 0.2  # seconds: the delivery deadline, shortened so a hang costs little here


class HangingSlack:
    """Slack never answers; every other target takes the briefing at once."""

    def __init__(self) -> None:
        self.waits = 0
        self.sent: list[tuple[str, int]] = []

    async def __call__(self, target, briefing):
        if target.startswith("slack:"):
            self.waits += 1
            await asyncio.Event().wait()
        self.sent.append((target, briefing.id))
        return "ok"


async def test_a_hanging_target_is_waited_on_once_per_tick(queue, store, config, monkeypatch):
    monkeypatch.setattr(delivery, "DELIVERY_TIMEOUT", DEADLINE)
    config.deliver_to = ["slack:CDOWN", "web:briefings"]
    config.max_attempts = 3
    target = HangingSlack()
    for tick in range(3):
        await ingest_one(
            queue, Event("ssh", "event/alert", {"id": f"a{tick}", "summary": f"a{tick}"})
        )
        result = await run_tick(store, config, target, clock=lambda t=tick: MORNING + t * 900)
        assert len(result.briefings) == tick + 1  # the new one and the earlier ones, retried
        assert target.waits == tick + 1, "the dead target was waited on more than once a tick"
    assert [t for t, _ in target.sent] == ["web:briefings"] * 3  # each once, none held up

    listed = store.call(lambda db: feedback.list_briefings(db))
    slack = {b["id"]: d for b in listed for d in b["deliveries"] if d["target"] == "slack:CDOWN"}
    first = min(slack)
    assert slack[first]["status"] == "failed" and slack[first]["attempts"] == 3  # reported
    for delivery_row in slack.values():
        assert "TimeoutError" in delivery_row["last_error"], delivery_row
