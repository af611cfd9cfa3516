"""An MCP server flooding events no store may take, under the real ``bothost run``.

Found from outside: ``event/\\ud800`` at full rate wrote one warning per event (228,713
lines, 49.6 MB of stderr in 30 s), and a 100,006-character ``event/…`` method was stored as
the type. Now the type is bounded for every producer (200 characters, as webhooks had it)
and the refusals are one line per source and minute, with a count.
"""

from __future__ import annotations

import sqlite3

from tests.faults.test_hostile_mcp import (
    START_BOUND,
    Flood,
    bothost_run,
    endure,
    polite_still_answers,
    server,
)
from tests.helpers import until

FLOOD_BYTES = 2 * 1024 * 1024  # ~7,500 events, ~15 of them 100 KB types: each refused
MAX_REFUSAL_LINES = 6  # the first line, then one a minute: the test takes far under 5 min


def stored(home) -> list[tuple[str, int]]:
    conn = sqlite3.connect(f"file:{home / 'bothost.db'}?mode=ro", uri=True)
    try:
        return conn.execute(
            "SELECT type, length(type) FROM events WHERE source = 'hostile'"
        ).fetchall()
    finally:
        conn.close()


async def test_a_flood_of_refused_events_is_a_few_log_lines_and_no_long_type(tmp_path, home):
    mark = tmp_path / "flooding"
    async with bothost_run(
        tmp_path,
        home,
        {"hostile": server("flood-bad-event", mark), "polite": server("polite")},
    ) as host:
        await until(mark.exists, START_BOUND)
        await endure(host, Flood(mark), FLOOD_BYTES)
        await polite_still_answers(host)
    rows = stored(home)
    assert rows and {t for t, _ in rows} == {"event/ok"}  # the neighbours, and only they
    log = (home / "logs" / "bothost.log").read_text(errors="replace").splitlines()
    refusals = [line for line in log if "event refused" in line]
    assert 1 <= len(refusals) <= MAX_REFUSAL_LINES, len(refusals)
    assert max(len(line) for line in log) < 2000  # a 100 KB type is never written whole
