"""A tick's claim reads pending events through indexes, not by walking every pending row.

With 100,000 low events held for a later briefing, the claim's query is planned as a walk of
the ``events_claim`` index in claim order (new events first, held low ones last) stopping at
the limit, on both backends: no sort of every pending row per tick, which is what the query
did before the index. The retries are read from the pending briefings to their events.
"""

from __future__ import annotations

from bothost.events import ledger
from tests.conftest import both_backends

HELD = 100_000
LIMIT = 50


def fill(db) -> None:
    """``HELD`` low events held for a later briefing, a few done ones and five new ones."""
    rows = "SELECT 'ops', 'alert', '{}', n, 'k' || n, 'pending', 'low' FROM" + (
        " generate_series(1, ?) AS n"
        if db.dialect == "postgresql"
        else " (WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ?)"
        " SELECT n FROM s)"
    )
    with db.transaction() as conn:
        conn.execute(
            "INSERT INTO events (source, type, payload, received_at, dedupe_key, status,"
            f" priority) {rows}",
            (HELD,),
        )
        conn.executemany(
            "INSERT INTO events (source, type, payload, received_at, dedupe_key, status,"
            " priority) VALUES ('ops', 'alert', '{}', ?, ?, ?, ?)",
            [(n, f"new{n}", "pending", None) for n in range(5)]
            + [(n, f"old{n}", "done", "normal") for n in range(5)],
        )
    db.execute("ANALYZE events")


def plan(db, query: str, params: tuple = ()) -> str:
    if db.dialect == "postgresql":
        return "\n".join(r[0] for r in db.execute(f"EXPLAIN {query}", params))
    return "\n".join(r[3] for r in db.execute(f"EXPLAIN QUERY PLAN {query}", params))


@both_backends
def test_the_claim_walks_the_claim_index_instead_of_sorting_held_events(store):
    store.call(fill)
    text = store.call(lambda db: plan(db, ledger.fresh(db.dialect), (LIMIT,)))
    assert "events_claim" in text, text
    assert "TEMP B-TREE FOR ORDER BY" not in text, text  # SQLite's sort
    assert "Sort" not in text, text  # PostgreSQL's
    fresh = store.call(lambda db: db.execute(ledger.fresh(db.dialect), (LIMIT,)).fetchall())
    assert len(fresh) == LIMIT
    # the five new events (inserted after the held ones) first, then held ones by id
    assert [r[0] > HELD for r in fresh] == [True] * 5 + [False] * (LIMIT - 5)
    assert [r[0] for r in fresh[5:]] == sorted(r[0] for r in fresh[5:])


def test_the_retries_are_read_from_the_pending_briefings_not_every_pending_event(store):
    """SQLite only: PostgreSQL's planner, with statistics, started from the briefings
    already; SQLite's walked every pending event, held ones too, on every tick."""
    store.call(fill)
    text = store.call(lambda db: plan(db, ledger.RETRIES))
    assert "SEARCH e USING INDEX events_briefing" in text, text
