"""Routing a briefing to platforms by target prefix; console prints and always succeeds."""

from __future__ import annotations

import io

import pytest

from bothost.events.delivery import UnknownTargetError, platform_deliver
from bothost.models import Address, Briefing


class FakePlatform:
    def __init__(self) -> None:
        self.got: list[tuple[Address, Briefing]] = []

    async def send_briefing(self, address, briefing):
        self.got.append((address, briefing))
        return "ts-1"


async def test_targets_go_to_their_platform_and_console_prints():
    slack, out = FakePlatform(), io.StringIO()
    deliver = platform_deliver({"slack": slack}, stream=out)
    briefing = Briefing(title="t", items=[], text="Briefing · Wed 08:00 · 1 event", targets=[])
    assert await deliver("slack:C1:1712345678.000100", briefing) == "ts-1"
    assert slack.got[0][0] == Address("slack", "C1", "1712345678.000100")
    assert await deliver("console:", briefing) == "stdout"
    assert out.getvalue() == "Briefing · Wed 08:00 · 1 event\n\n"
    with pytest.raises(UnknownTargetError, match="pager:ops"):
        await deliver("pager:ops", briefing)
