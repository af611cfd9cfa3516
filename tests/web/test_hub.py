"""The hub's fan-out to pages: a page that stops reading costs a line a minute, not one per
event it misses."""

from bothost.plugins.web.hub import STREAM_QUEUE, Hub


def test_a_page_that_stops_reading_is_a_warning_a_minute_not_one_per_dropped_event(caplog):
    hub = Hub()
    hub.subscribe("web:asleep")
    hub.subscribe("web:away")
    with caplog.at_level("WARNING", "bothost.plugins.web.hub"):
        for n in range(STREAM_QUEUE + 5_000):
            hub.broadcast("message", {"n": n})
    lines = [r.getMessage() for r in caplog.records if "not reading" in r.getMessage()]
    assert 2 <= len(lines) <= 4, lines[:3]  # each page's first, and one a minute after
