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


def events_migrations() -> list[Migration]:
    """The events component's own migrations (indexes over the core tables)."""
    return [
        Migration("events", 1, sql(INDEXES_1), "indexes for ticks and deliveries"),
        Migration("events", 2, sql(INDEXES_2), "pending events by source"),
    ]
