"""Events, tick and briefings: the durable queue of pushed events and what triages it.

Producers push :class:`~bothost.models.Event` objects into :class:`EventQueue`; the
:class:`Ticker` claims them on a schedule, triages them (``tick.rules`` offline, or the tick
agent through :class:`LlmTriage`), renders a :class:`~bothost.models.Briefing` and delivers
it to ``tick.deliver_to``. See ``docs/events.md`` for the whole story.
"""

from __future__ import annotations

from bothost.store.migrations import Migration, sql

# finish_briefing settles events by briefing; the deliveries list filters by status
INDEXES_1 = """
CREATE INDEX IF NOT EXISTS events_briefing ON events (briefing_id);
CREATE INDEX IF NOT EXISTS briefings_status ON briefings (status);
"""

# a source's pending events, counted at its bound (bothost.events.bounds): only pending rows
# are in it, so it stays as small as the bounds keep them
INDEXES_2 = """
CREATE INDEX IF NOT EXISTS events_pending_source ON events (source) WHERE status = 'pending';
"""

# the order a tick takes pending events in: held low ones last, so however many wait they
# never keep a new event out of a tick (bothost.events.ledger.claim)
LOW_LAST = "CASE WHEN priority = 'low' THEN 1 ELSE 0 END"
CLAIM_ORDER = f"{LOW_LAST}, id"

# the claim reads pending events in CLAIM_ORDER; without an index in that order every tick
# sorted all pending rows (100,000 held low events: a full sort per tick). Only pending rows
# are in it, and the query must spell the expression exactly as here to be matched to it.
# No status column: one would tie, for SQLite's planner, with events_briefing and
# events_pending_source in their own queries' `status = 'pending'` probes (and win them).
INDEXES_3 = f"""
CREATE INDEX IF NOT EXISTS events_claim ON events (({LOW_LAST}), id) WHERE status = 'pending';
"""


def events_migrations() -> list[Migration]:
    """The events component's own migrations (indexes over the core tables)."""
    return [
        Migration("events", 1, sql(INDEXES_1), "indexes for ticks and deliveries"),
        Migration("events", 2, sql(INDEXES_2), "pending events by source"),
        Migration("events", 3, sql(INDEXES_3), "pending events in the order a tick claims them"),
    ]
