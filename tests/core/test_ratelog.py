"""Rate-limited warnings: one line per key and interval, the next one says how many were left out."""

from __future__ import annotations

import logging

from bothost.logs.rate import RateLimitedLog


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "test.ratelog"]


def test_one_line_per_key_and_interval_then_a_count_of_the_rest(caplog):
    clock = Clock()
    log = RateLimitedLog(logging.getLogger("test.ratelog"), interval=60.0, clock=clock)
    with caplog.at_level(logging.WARNING, "test.ratelog"):
        for i in range(5000):
            log.warning("hostile", "event refused: %r", f"event/{i}")
        log.warning("polite", "event refused: %r", "event/x")  # another source: its own line
        clock.now += 61
        log.warning("hostile", "event refused: %r", "event/last")
    assert lines(caplog) == [
        "event refused: 'event/0'",
        "event refused: 'event/x'",
        "event refused: 'event/last' (and 4,999 more like it since the last such line)",
    ]


def test_a_flood_of_new_keys_stays_bounded(caplog):
    clock = Clock()
    log = RateLimitedLog(logging.getLogger("test.ratelog"), clock=clock, max_keys=10)
    with caplog.at_level(logging.WARNING, "test.ratelog"):
        for i in range(1000):
            log.warning(f"source{i}", "refused from %s", f"source{i}")
    assert len(lines(caplog)) == 11  # ten keys of their own, then one line for all the others
    assert len(log._last) <= 11


def test_a_percent_sign_in_the_message_or_arguments_is_kept(caplog):
    clock = Clock()
    log = RateLimitedLog(logging.getLogger("test.ratelog"), clock=clock)
    with caplog.at_level(logging.WARNING, "test.ratelog"):
        log.warning("k", "100%% of %s", "x%sy")
        log.warning("k", "100%% of %s", "x%sy")
        clock.now += 61
        log.warning("k", "100%% of %s", "x%sy")
    assert lines(caplog) == [
        "100% of x%sy",
        "100% of x%sy (and 1 more like it since the last such line)",
    ]
