"""Routing a briefing to platforms by target prefix; ``console:`` goes to the console platform."""

from __future__ import annotations

import pytest

from bothost.events.delivery import UnknownTargetError, platform_deliver
from bothost.hooks.discovery import load_plugins, new_plugin_manager
from bothost.hooks.startup import collect_platforms
from bothost.models import Address, Briefing
from tests.conftest import both_backends

pytestmark = both_backends


class FakePlatform:
    def __init__(self) -> None:
        self.got: list[tuple[Address, Briefing]] = []

    async def send_briefing(self, address, briefing):
        self.got.append((address, briefing))
        return "ts-1"


BRIEFING = Briefing(title="t", items=[], text="Briefing · Wed 08:00 · 1 event", targets=[])


async def test_targets_go_to_their_platform():
    slack, console = FakePlatform(), FakePlatform()
    deliver = platform_deliver({"slack": slack, "console": console})
    assert await deliver("slack:C1:1712345678.000100", BRIEFING) == "ts-1"
    assert slack.got[0][0] == Address("slack", "C1", "1712345678.000100")
    assert await deliver("console:", BRIEFING) == "ts-1"  # no bypass around the platform
    assert console.got == [(Address("console", ""), BRIEFING)]
    with pytest.raises(UnknownTargetError, match="pager:ops"):
        await deliver("pager:ops", BRIEFING)


async def test_the_console_platform_prints_the_briefing_before_it_returns(capsys):
    pm = new_plugin_manager()
    load_plugins(pm)
    deliver = platform_deliver(collect_platforms(pm))
    assert await deliver("console:", BRIEFING) == "stdout"
    assert capsys.readouterr().out.startswith("Briefing · Wed 08:00 · 1 event\n")
