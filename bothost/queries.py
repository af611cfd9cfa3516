"""Core data for plugins: the reads the dashboard, metrics, web chat and Slack need, and the
few writes they make on core tables (feedback on events, webhook receipts).

Core tables are private to ``bothost/``; plugins reach them only through :class:`Queries`
(``host.queries``), so the schema and the store's backend can change in this one module.
Every function is one job on the store's thread and returns plain dataclasses, dicts or
numbers, never rows or cursors. Views of the running host that are not in the store (MCP
server status, running platforms, open HTTP connections, whether the store can write) are
here too, so a plugin never needs the host's internals to show them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bothost.agent import history
from bothost.agent.conversations import SHOWN, Conversation, end_of, listing
from bothost.config import PermissionRule, UsageConfig
from bothost.events import feedback
from bothost.models import Address
from bothost.rules import store as rule_store
from bothost.rules.match import PRECEDENCE, allow_above, spec_from_data
from bothost.rules.origin import pinnable
from bothost.usage import report, summary
from bothost.usage.report import UsageRow
from bothost.usage.summary import Summary

if TYPE_CHECKING:
    from bothost.agent.tools import Tool
    from bothost.events.bounds import PendingBounds
    from bothost.http.listener import ConnectionGuard
    from bothost.mcp.manager import McpManager
    from bothost.store import Conn, Store

EVENT_STATUSES = ("pending", "claimed", "snoozed", "done", "failed")  # every status an event has
TRANSCRIPT = 100  # messages a transcript read returns unless asked for fewer
RECENT = 25  # rows of a "recent" listing unless asked for another number


@dataclass(frozen=True)
class TranscriptMessage:
    """One thing a person or the agent said in a session (tool traffic left out)."""

    role: str  # user | assistant
    text: str
    at: float
    stopped: bool = False  # what a stopped turn had streamed (maybe nothing), kept


@dataclass(frozen=True)
class ToolCallRow:
    id: int
    session: str | None
    tool: str
    arguments: str | None  # JSON text as the model sent it
    result: str | None
    is_error: bool
    status: str | None
    duration_ms: float | None
    started_at: float


@dataclass(frozen=True)
class TickRow:
    id: int
    trigger: str | None
    started_at: float
    finished_at: float | None
    status: str
    events: int | None
    briefings: int | None
    error: str | None


@dataclass(frozen=True)
class SessionRow:
    id: str  # the session's address as text
    platform: str
    channel: str | None
    thread: str | None
    user: str | None
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class EventRow:
    id: int
    source: str
    type: str
    payload: dict[str, Any]
    status: str
    received_at: float


@dataclass(frozen=True)
class ToolFigures:
    tool: str
    calls: int
    errors: int
    duration_ms: float


@dataclass(frozen=True)
class Figures:
    """Totals over the store, for ``/metrics``: counters as long as rows are kept."""

    messages_by_platform: dict[str, int]  # messages people sent
    turns: int
    tools: list[ToolFigures]
    events_by_status: dict[str, int]
    finished_ticks: int
    tick_seconds: float  # summed over the finished ticks
    last_tick: TickRow | None  # the latest finished tick
    ticks_by_status: dict[str, int]
    deliveries_by_status: dict[str, int]
    webhook_ids: int  # webhook ids remembered for dedupe
    llm_by_model: list[UsageRow] = field(default_factory=list)  # model calls, all time
    llm_by_kind: list[UsageRow] = field(default_factory=list)  # turn | tick | other
    currency: str = "USD"  # of the costs in the usage rows


@dataclass(frozen=True)
class McpServerRow:
    """One MCP server as the running manager sees it."""

    name: str
    origin: str  # config | db
    enabled: bool
    state: str  # starting | ready | failed | stopped | disabled | shadowed
    error: str | None = None
    tools: int = 0
    restarts: int = 0
    pid: int | None = None
    transport: str = "stdio"  # stdio | http
    target: str = ""  # the command line or the URL, secrets masked
    note: str = ""
    tool_names: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Connections:
    """The HTTP listener's connections (only while it is serving)."""

    open: int
    cap: int
    closed: dict[str, int]  # connections closed early, by reason


class Queries:
    """What plugins may read (and the few things they may change) of core data."""

    def __init__(
        self,
        store: Store,
        *,
        mcp: Callable[[], McpManager | None] = lambda: None,
        platforms: Callable[[], Iterable[str]] = tuple,
        connections: Callable[[], ConnectionGuard | None] = lambda: None,
        usage: UsageConfig | None = None,
        permissions: Callable[[], list[PermissionRule]] = list,
        lookup: Callable[[str], Tool | None] = lambda name: None,
        bounds: Callable[[], PendingBounds | None] = lambda: None,
    ) -> None:
        # the manager and the listener come and go with the host's start and stop: ask late
        self.store = store
        self._mcp = mcp
        self._platforms = platforms
        self._connections = connections
        self._usage = usage or UsageConfig()  # prices turn tokens into cost; budgets
        self._permissions = permissions
        self._lookup = lookup  # a tool the host lists now, by the name the model sees
        self._bounds = bounds  # the event queue's per-source bounds, while it runs

    # --- sessions and transcripts ---------------------------------------------------------

    async def session(self, address: Address) -> SessionRow | None:
        """The session at ``address``, if the bot has ever had a turn there."""

        def read(db: Conn) -> SessionRow | None:
            row = db.execute(
                'SELECT id, platform, channel, thread, "user", created_at,'
                " updated_at FROM sessions WHERE id = ?",
                [str(address)],
            ).fetchone()
            return SessionRow(*row) if row else None

        return await self.store.run(read)

    def use_usage(self, usage: UsageConfig) -> None:
        """Price and budget by ``usage`` from now on (a config edit the host applied)."""
        self._usage = usage

    async def transcript(
        self, address: Address, limit: int = TRANSCRIPT, start: int | None = None
    ) -> list[TranscriptMessage]:
        """The session's latest ``limit`` user and assistant messages with text, oldest first,
        since its latest fresh start (``/new``); a stopped turn's reply even when empty.
        With ``start`` (a :class:`Conversation`'s), that conversation's instead."""

        def read(db: Conn) -> list[TranscriptMessage]:
            session = str(address)
            after = history.fresh_since(db, session) if start is None else start
            end = None if start is None else end_of(db, session, start)
            rows = db.execute(
                "SELECT role, content, created_at, data FROM messages WHERE session_id = ?"
                f" AND id > ? AND id <= ? AND {SHOWN} ORDER BY id DESC LIMIT ?",
                (session, after, 2**62 if end is None else end, limit),
            ).fetchall()
            return [
                TranscriptMessage(role, text, at, bool(data and json.loads(data).get("stopped")))
                for role, text, at, data in reversed(rows)
            ]

        return await self.store.run(read)

    async def conversations(self, platform: str, limit: int = RECENT) -> list[Conversation]:
        """The newest ``limit`` conversations had on ``platform``, newest first: each of its
        sessions cut at its fresh starts (``/new``), with its first line and times."""
        return await self.store.run(lambda db: listing(db, platform, limit))

    async def tool_calls(self, limit: int = RECENT) -> list[ToolCallRow]:
        """The latest tool calls of every session, newest first."""

        def read(db: Conn) -> list[ToolCallRow]:
            rows = db.execute(
                "SELECT id, session_id, tool, arguments, result, is_error, status, duration_ms,"
                " started_at FROM tool_calls ORDER BY id DESC LIMIT ?",
                (limit,),
            ).fetchall()
            return [ToolCallRow(r[0], r[1], r[2], r[3], r[4], bool(r[5]), *r[6:]) for r in rows]

        return await self.store.run(read)

    # --- events and ticks -------------------------------------------------------------------

    async def queue_counts(self) -> dict[str, int]:
        """Events by status; every status is present, zero when none."""

        def read(db: Conn) -> dict[str, int]:
            return dict(db.execute("SELECT status, COUNT(*) FROM events GROUP BY status"))

        return {**dict.fromkeys(EVENT_STATUSES, 0), **await self.store.run(read)}

    async def recent_events(
        self, status: str | None = None, limit: int = RECENT
    ) -> list[dict[str, Any]]:
        """The newest events, every status unless ``status`` is given (``events list`` rows:
        id, source, type, payload, status, priority, attempts, …)."""
        return await self.store.run(lambda db: feedback.list_events(db, status, limit))

    async def events(self, ids: Iterable[int]) -> list[EventRow]:
        """The events with these ids (unknown ids are left out), in id order."""
        wanted = json.dumps(sorted(set(ids)))

        def read(db: Conn) -> list[EventRow]:
            rows = db.execute(
                "SELECT id, source, type, payload, status, received_at FROM events"
                f" WHERE id IN ({db.ids}) ORDER BY id",
                [wanted],
            ).fetchall()
            return [EventRow(r[0], r[1], r[2], json.loads(r[3] or "{}"), r[4], r[5]) for r in rows]

        return await self.store.run(read)

    async def event_queued(self, dedupe_key: str) -> bool:
        """Whether any event with this dedupe key was ever queued."""
        return await self.store.run(
            lambda db: (
                db.execute(
                    "SELECT 1 FROM events WHERE dedupe_key = ? LIMIT 1", [dedupe_key]
                ).fetchone()
                is not None
            )
        )

    async def ticks(self, limit: int = RECENT) -> list[TickRow]:
        """The latest ticks, newest first (a running one has no ``finished_at``)."""

        def read(db: Conn) -> list[TickRow]:
            rows = db.execute(
                "SELECT id, trigger, started_at, finished_at, status, events,"
                " briefings, error FROM ticks ORDER BY id DESC LIMIT ?",
                [limit],
            ).fetchall()
            return [TickRow(*row) for row in rows]

        return await self.store.run(read)

    async def figures(self) -> Figures:
        """Every total ``/metrics`` shows, in one read."""
        return await self.store.run(lambda db: read_figures(db, self._usage))

    # --- model usage ------------------------------------------------------------------------

    async def usage(self, by: str = "day", since: float = 0.0) -> list[UsageRow]:
        """Model calls since ``since`` (epoch seconds) summed by ``day`` (UTC), ``user``
        (``platform:user``; the tick's as ``tick``), ``model`` or ``kind``, with cost from
        ``usage.prices``."""
        if by not in report.BY:
            raise ValueError(f"by: expected one of {', '.join(report.BY)}, got {by!r}")
        return await self.store.run(lambda db: report.totals(db, by, self._usage.prices, since))

    async def usage_summary(self, by: str = "user", since: float | None = None) -> Summary:
        """What ``bothost usage`` shows (default: today, UTC, by user), budgets included."""
        now = time.time()
        start = report.day_start(now) if since is None else since
        return await self.store.run(lambda db: summary.summarise(db, self._usage, by, start, now))

    # --- feedback on events (idempotent: a double click changes nothing more) --------------

    async def acknowledge(self, event_ids: list[int]) -> int:
        """Mark events done (seen, nothing more to say); how many changed."""
        return await feedback.acknowledge(self.store, event_ids)

    async def snooze(self, event_ids: list[int], until: float) -> int:
        """Hide events until ``until`` (epoch seconds); how many changed."""
        return await feedback.snooze(self.store, event_ids, until)

    async def mute(
        self,
        source: str | None,
        type: str | None,
        match: Mapping[str, str],
        *,
        created_by: str = "",
    ) -> int:
        """Mute events like these (globs on source, type, ``payload.<field>``); the mute's id."""
        return await feedback.mute(self.store, source, type, dict(match), created_by=created_by)

    # --- webhook receipts: a ``webhook-id`` is processed once ------------------------------

    async def webhook_seen(self, webhook_id: str) -> bool:
        return await self.store.run(
            lambda db: (
                db.execute("SELECT 1 FROM webhook_ids WHERE id = ?", [webhook_id]).fetchone()
                is not None
            )
        )

    async def remember_webhook(
        self, webhook_id: str, at: float, forget_before: float | None = None
    ) -> bool:
        """Record ``webhook_id`` as received at ``at``; drop ids older than ``forget_before``.

        True when this call recorded it, False when it was there already: the id is the
        table's key, so of several hosts receiving the same id exactly one gets True.
        """

        def write(db: Conn) -> bool:
            new = db.execute(
                "INSERT INTO webhook_ids (id, received_at) VALUES (?, ?)"
                " ON CONFLICT (id) DO NOTHING",
                [webhook_id, at],
            ).rowcount
            if forget_before is not None:
                db.execute("DELETE FROM webhook_ids WHERE received_at < ?", [forget_before])
            return new > 0

        return await self.store.run(write)

    async def forget_webhooks(self, before: float) -> int:
        """Forget the ids received before ``before`` (senders stopped retrying them); how many."""
        return await self.store.run(
            lambda db: (
                db.execute("DELETE FROM webhook_ids WHERE received_at < ?", [before]).rowcount
            )
        )

    async def forget_webhook(self, webhook_id: str) -> None:
        """Forget ``webhook_id`` (its request failed before an answer: a retry may run it)."""
        await self.store.run(
            lambda db: db.execute("DELETE FROM webhook_ids WHERE id = ?", [webhook_id])
        )

    # --- platform deliveries: a chat platform's retried delivery is processed once -------

    async def claim_delivery(
        self, platform: str, keys: Iterable[str], at: float, keep: float
    ) -> bool:
        """Record the delivery ``keys`` of ``platform`` (an event id, a message's own key) as
        received at ``at``, and forget those received before ``at - keep`` (``keep``: the
        platform's retry window with a margin).

        True when none of ``keys`` was recorded before: the keys are the table's key, so of
        several hosts (or one host before and after a restart) taking the same delivery,
        exactly one gets True. All keys are recorded either way.
        """
        keys = list(dict.fromkeys(keys))

        def write(db: Conn) -> bool:
            new = 0
            with db.transaction():  # one commit for the keys and the expiry
                for key in keys:
                    new += db.execute(
                        "INSERT INTO platform_deliveries (platform, key, received_at)"
                        " VALUES (?, ?, ?) ON CONFLICT (platform, key) DO NOTHING",
                        [platform, key, at],
                    ).rowcount
                # per platform: each keeps its deliveries for its own retry window
                db.execute(
                    "DELETE FROM platform_deliveries WHERE platform = ? AND received_at < ?",
                    [platform, at - keep],
                )
            return new == len(keys)

        return await self.store.run(write)

    async def forget_delivery(self, platform: str, key: str) -> None:
        """Forget one delivery of ``platform`` (nothing was answered: a retry may run it)."""
        await self.store.run(
            lambda db: db.execute(
                "DELETE FROM platform_deliveries WHERE platform = ? AND key = ?", [platform, key]
            )
        )

    # --- permission rules: stored ones change at run time, config ones only in the file ----

    async def permission_rules(self) -> dict[str, Any]:
        """``rules``: every rule in the order checked (stored, then config), each with its
        ``position``, ``ref``, ``origin`` and keys; ``precedence``: how that order decides
        (a deny beats an ask above it); ``remembered``: the remembered answers."""
        permissions = self._permissions()
        rules, answers = await self.store.run(lambda db: rule_store.listing(db, permissions))
        return {
            "precedence": PRECEDENCE,
            "rules": [{**r.to_dict(), "position": i} for i, r in enumerate(rules, 1)],
            "remembered": [a.to_dict() for a in answers],
        }

    async def add_permission_rule(
        self, data: dict[str, Any], created_by: str, first: bool = False
    ) -> int:
        """Store a rule given as plain data (the keys of a ``permissions`` entry); its id.

        A ``tool`` that names one MCP tool the host lists now is kept with that tool's
        origin (see docs/configuration.md, permission rules), so no renaming moves the
        rule to another tool. Raises ValueError naming the key that is wrong.
        """
        spec = spec_from_data(data)  # RuleError is a ValueError
        found = self._lookup(spec.tool) if pinnable(spec.tool) else None
        origin = found.where_from() if found is not None else None
        return await self.store.run(
            lambda db: rule_store.add(db, spec, created_by, first=first, tool_origin=origin)
        )

    async def allows_above(self, rule_id: int) -> list[str]:
        """For a stored ``deny`` rule: a note per stored ``allow`` above it that may still
        decide some of its calls (an allow above a deny is an exception to it)."""
        above = await self.store.run(lambda db: rule_store.allows_above(db, rule_id))
        return [allow_above(r) for r in above]

    async def remove_permission_rule(self, rule_id: int) -> bool:
        """Remove a stored rule or remembered answer; False when there is no such row."""
        return await self.store.run(lambda db: rule_store.remove(db, rule_id))

    # --- the running host ---------------------------------------------------------------------

    def mcp_servers(self) -> list[McpServerRow]:
        """Every MCP server with its state and tool names (empty without a manager)."""
        manager = self._mcp()
        if manager is None:
            return []
        return [
            McpServerRow(
                s.name,
                s.origin,
                s.enabled,
                s.state,
                s.error,
                s.tools,
                s.restarts,
                s.pid,
                s.transport,
                s.target,
                s.note,
                sorted(str(t.get("name", "")) for t in manager.tools(s.name)),
            )
            for s in manager.status()
        ]

    def platforms(self) -> list[str]:
        """The names of the platforms that are running."""
        return sorted(self._platforms())

    def connections(self) -> Connections | None:
        """The HTTP listener's connections; None while it is not serving."""
        guard = self._connections()
        if guard is None or guard.server is None:
            return None
        return Connections(guard.open_count(), guard.cap, dict(guard.counts))

    def store_writable(self) -> bool:
        """False after a write failed with a storage error (disk full, I/O, corrupt)."""
        return bool(self.store.health.report()["ok"])

    async def held_sources(self) -> dict[str, int]:
        """The event sources held at ``tick.max_pending_per_source`` now (counted again),
        with their pending counts; empty without a running queue."""
        bounds = self._bounds()
        return {} if bounds is None else await self.store.run(bounds.refresh)


def read_figures(db: Conn, usage: UsageConfig | None = None) -> Figures:
    def q(sql: str) -> list[tuple[Any, ...]]:
        return db.execute(sql).fetchall()

    count, seconds = q(
        "SELECT COUNT(*), COALESCE(SUM(finished_at - started_at), 0) FROM ticks"
        " WHERE finished_at IS NOT NULL"
    )[0]
    last = q(
        "SELECT id, trigger, started_at, finished_at, status, events, briefings, error"
        " FROM ticks WHERE finished_at IS NOT NULL ORDER BY id DESC LIMIT 1"
    )
    return Figures(
        messages_by_platform=dict(
            q(
                "SELECT COALESCE(s.platform, 'unknown'), COUNT(*) FROM messages m"
                " LEFT JOIN sessions s ON s.id = m.session_id WHERE m.role = 'user' GROUP BY 1"
            )
        ),
        turns=q("SELECT COUNT(DISTINCT turn_id) FROM messages WHERE turn_id IS NOT NULL")[0][0],
        tools=[
            ToolFigures(tool, calls, errors or 0, ms or 0.0)
            for tool, calls, errors, ms in q(
                "SELECT tool, COUNT(*), SUM(is_error), SUM(COALESCE(duration_ms, 0))"
                " FROM tool_calls GROUP BY tool"
            )
        ],
        events_by_status=dict(q("SELECT status, COUNT(*) FROM events GROUP BY status")),
        finished_ticks=count,
        tick_seconds=seconds,
        last_tick=TickRow(*last[0]) if last else None,
        ticks_by_status=dict(q("SELECT status, COUNT(*) FROM ticks GROUP BY status")),
        deliveries_by_status=dict(q("SELECT status, COUNT(*) FROM deliveries GROUP BY status")),
        webhook_ids=q("SELECT COUNT(*) FROM webhook_ids")[0][0],
        llm_by_model=report.totals(db, "model", usage.prices if usage else {}),
        llm_by_kind=report.totals(db, "kind", usage.prices if usage else {}),
        currency=usage.currency if usage else "USD",
    )
