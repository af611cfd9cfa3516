"""Flood control's count of what was dropped (bothost.mcp.flood.Tally), on a fake clock."""

from __future__ import annotations

import logging

from bothost.mcp.flood import DROP_LOG_EVERY, Tally


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_a_tally_logs_the_first_drop_then_the_counts_at_most_every_interval(caplog):
    clock = FakeClock()
    tally = Tally(logging.getLogger("test.flood"), clock, label="flooded")
    with caplog.at_level(logging.WARNING, logger="test.flood"):
        tally.add("log")
        for _ in range(4):
            tally.add("log")
        tally.add("request")
        assert [r.getMessage() for r in caplog.records] == [
            "flooded: 1 × log (since the last such line)"
        ]
        clock.now += DROP_LOG_EVERY - 0.001  # not yet: nothing more is said
        tally.add("log")
        assert len(caplog.records) == 1
        clock.now += 0.001
        tally.add("log")
    assert [r.getMessage() for r in caplog.records][1:] == [
        "flooded: 6 × log, 1 × request (since the last such line)"
    ]
    assert tally.counts == {}
