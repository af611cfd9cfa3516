"""Numbered, append-only schema migrations, per component.

A migration is ``(component, number, apply)``: the core's component is ``core``; plugins
add their own through the ``register_migrations`` hook. Each is applied once, in a
transaction together with its row in ``_migrations``, in number order within its component.
Never edit a migration that has shipped: add the next number.

``apply(conn)`` gets a :class:`~bothost.store.conn.Conn` on either backend. Most are one DDL
text run with ``conn.script(...)`` (see :mod:`bothost.store.conn` for the types it maps on
PostgreSQL); :func:`sql` makes such a migration from the text. Where the dialects must
differ, branch on ``conn.dialect``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bothost.store.conn import SQLITE, Conn
from bothost.store.usage_figures import migrate_18


@dataclass(frozen=True)
class Migration:
    component: str
    number: int
    apply: Callable[[Conn], None]
    name: str = ""


def sql(text: str) -> Callable[[Conn], None]:
    """A migration's ``apply`` that runs ``text`` (``;``-separated DDL) on either backend."""

    def apply(conn: Conn) -> None:
        conn.script(text)

    return apply


def pending(conn: Conn, migrations: Iterable[Migration]) -> list[Migration]:
    """The migrations not recorded yet, in the order they are applied."""
    done = set()
    if "_migrations" in conn.table_names():
        done = {(r[0], r[1]) for r in conn.execute("SELECT component, number FROM _migrations")}
    ordered = sorted(migrations, key=lambda m: (m.component != "core", m.component, m.number))
    return [m for m in ordered if (m.component, m.number) not in done]


def apply_migrations(conn: Conn, migrations: Iterable[Migration]) -> list[str]:
    """Apply every migration not yet recorded; return their labels."""
    conn.script(
        "CREATE TABLE IF NOT EXISTS _migrations (component TEXT NOT NULL, number INTEGER NOT NULL,"
        " name TEXT, applied_at REAL, PRIMARY KEY (component, number))"
    )
    applied = []
    for m in pending(conn, migrations):
        with conn.transaction():
            # another process may have applied it while we waited for the lock
            again = conn.value(
                "SELECT 1 FROM _migrations WHERE component = ? AND number = ?",
                (m.component, m.number),
            )
            if not again:
                m.apply(conn)
                conn.execute(
                    "INSERT INTO _migrations (component, number, name, applied_at)"
                    " VALUES (?, ?, ?, ?)",
                    (m.component, m.number, m.name, time.time()),
                )
        applied.append(f"{m.component}:{m.number}")
    return applied


CORE_SCHEMA_1 = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, platform TEXT NOT NULL, channel TEXT, thread TEXT,
    "user" TEXT, created_at REAL NOT NULL, updated_at REAL NOT NULL, meta TEXT
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, turn_id TEXT, role TEXT NOT NULL,
    content TEXT, data TEXT, tokens INTEGER, created_at REAL NOT NULL
);
CREATE INDEX messages_session ON messages (session_id, id);
CREATE TABLE tool_calls (
    id INTEGER PRIMARY KEY, session_id TEXT, turn_id TEXT, call_id TEXT, tool TEXT NOT NULL,
    arguments TEXT, result TEXT, is_error INTEGER NOT NULL DEFAULT 0, error TEXT,
    status TEXT, duration_ms REAL, started_at REAL NOT NULL
);
CREATE INDEX tool_calls_session ON tool_calls (session_id, id);
CREATE TABLE mcp_servers (
    name TEXT PRIMARY KEY, command TEXT, args TEXT, env TEXT, env_passthrough TEXT,
    url TEXT, headers TEXT, enabled INTEGER NOT NULL DEFAULT 1, description TEXT,
    tools TEXT, timeout REAL, origin TEXT, install TEXT, created_at REAL NOT NULL
);
CREATE TABLE mcp_grants (
    session_id TEXT NOT NULL, server TEXT NOT NULL, granted_at REAL NOT NULL,
    PRIMARY KEY (session_id, server)
);
CREATE TABLE events (
    id INTEGER PRIMARY KEY, source TEXT NOT NULL, type TEXT NOT NULL, payload TEXT NOT NULL,
    received_at REAL NOT NULL, dedupe_key TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0, claimed_until REAL, snoozed_until REAL,
    briefing_id INTEGER, priority TEXT, last_error TEXT
);
CREATE INDEX events_status ON events (status, id);
CREATE INDEX events_dedupe ON events (dedupe_key, received_at);
CREATE TABLE ticks (
    id INTEGER PRIMARY KEY, trigger TEXT, started_at REAL NOT NULL, finished_at REAL,
    status TEXT NOT NULL, events INTEGER, briefings INTEGER, error TEXT
);
CREATE TABLE briefings (
    id INTEGER PRIMARY KEY, tick_id INTEGER, created_at REAL NOT NULL, structure TEXT NOT NULL,
    text TEXT NOT NULL, targets TEXT NOT NULL, event_count INTEGER, status TEXT NOT NULL
);
CREATE TABLE deliveries (
    id INTEGER PRIMARY KEY, briefing_id INTEGER NOT NULL, target TEXT NOT NULL,
    status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT,
    delivered_at REAL, ref TEXT, UNIQUE (briefing_id, target)
);
CREATE TABLE approvals (
    id INTEGER PRIMARY KEY, session_id TEXT, tool TEXT NOT NULL, arguments TEXT,
    decision TEXT NOT NULL, decided_by TEXT, reason TEXT, created_at REAL NOT NULL
);
CREATE TABLE mutes (
    id INTEGER PRIMARY KEY, source TEXT, type TEXT, match TEXT, until REAL,
    created_by TEXT, created_at REAL NOT NULL
);
CREATE TABLE locks (name TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL);
CREATE TABLE webhook_ids (id TEXT PRIMARY KEY, received_at REAL NOT NULL);
"""


# Permission rules added at run time and remembered answers (bothost.rules.store owns them).
CORE_SCHEMA_2 = """
CREATE TABLE permission_rules (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, position INTEGER NOT NULL, tool TEXT NOT NULL,
    args TEXT NOT NULL, exact INTEGER NOT NULL DEFAULT 0, who TEXT, action TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '', created_by TEXT NOT NULL DEFAULT '', created_at REAL NOT NULL
);
CREATE INDEX permission_rules_order ON permission_rules (kind, position, id);
"""


# core:3 — one row per model call (issue 18). `day` is the UTC date the call ended, written
# by our code so per-day sums need no SQL date functions (SQLite and PostgreSQL differ);
# `kind` says whose call it was: a person's turn, the tick agent, or neither.
CORE_SCHEMA_3 = """
CREATE TABLE llm_usage (
    id INTEGER PRIMARY KEY, at REAL NOT NULL, day TEXT NOT NULL, kind TEXT NOT NULL,
    provider TEXT NOT NULL, model TEXT NOT NULL, input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL, cached_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0, estimated INTEGER NOT NULL DEFAULT 0,
    turn_id TEXT, session_id TEXT, user_key TEXT, tick_id INTEGER
);
CREATE INDEX llm_usage_at ON llm_usage (at);
CREATE INDEX llm_usage_user ON llm_usage (user_key, at);
"""

# core:4 — OAuth for remote MCP servers (issue 16): one record per server (its client
# registration and tokens, JSON), and the logins waiting for their redirect on the host's
# /oauth/callback, by OAuth state.
CORE_SCHEMA_4 = """
CREATE TABLE mcp_oauth (server TEXT PRIMARY KEY, record TEXT NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE oauth_logins (
    state TEXT PRIMARY KEY, server TEXT NOT NULL, created_at REAL NOT NULL, params TEXT
);
"""


# core:5 — a conversation compacted to fit the model's context: each row summarises every
# message of its session up to ``covers_through`` (a messages.id; the messages stay), so the
# newest row is the one a turn uses. ``private`` / ``untrusted`` carry the interlock's flags
# of what it covers; ``method`` says who wrote it (``model`` or ``extract``, the offline
# agent's).
CORE_SCHEMA_5 = """
CREATE TABLE summaries (
    id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, covers_through INTEGER NOT NULL,
    content TEXT NOT NULL, tokens INTEGER NOT NULL, private INTEGER NOT NULL DEFAULT 0,
    untrusted INTEGER NOT NULL DEFAULT 0, method TEXT NOT NULL, created_at REAL NOT NULL
);
CREATE INDEX summaries_session ON summaries (session_id, covers_through);
"""


# core:6 — servers added at run time keep a max_timeout, like config servers (issue 15).
CORE_SCHEMA_6 = "ALTER TABLE mcp_servers ADD COLUMN max_timeout REAL"


# core:7 — several hosts on one store (issue 20): a server added at run time may be marked
# ``singleton`` (it runs on the leader only; NULL: decided by its command), each tick names
# the process that ran it (so "one tick at a time" can be checked across hosts), and a
# singleton server's state directory is kept here, so the next leader resumes from it.
CORE_SCHEMA_7 = """
ALTER TABLE mcp_servers ADD COLUMN singleton INTEGER;
ALTER TABLE ticks ADD COLUMN owner TEXT;
CREATE TABLE mcp_state (
    server TEXT PRIMARY KEY, files TEXT NOT NULL, owner TEXT, updated_at REAL NOT NULL
);
"""


# core:8 — the deliveries a chat platform has already taken (Slack's ``event_id`` and its
# message key): a platform retries a delivery it thinks was lost, and the retry may reach
# another host sharing the store or this host after a restart, so the record is in the
# store, not in a process. Rows older than the platform's retry window are deleted as new
# ones come (bothost.queries.Queries.claim_delivery).
CORE_SCHEMA_8 = """
CREATE TABLE platform_deliveries (
    platform TEXT NOT NULL, key TEXT NOT NULL, received_at REAL NOT NULL,
    PRIMARY KEY (platform, key)
);
CREATE INDEX platform_deliveries_received ON platform_deliveries (received_at);
"""


# core:12 — one-time login links an admin is sent in chat when a remote MCP server needs an
# OAuth login (issue 16, bothost/mcp/oauth/links.py): only the token's SHA-256 is kept, with
# the server, the admin it was made for, and when it expires and was used.
CORE_SCHEMA_12 = """
CREATE TABLE mcp_login_links (
    token_hash TEXT PRIMARY KEY, server TEXT NOT NULL, admin TEXT NOT NULL,
    created_at REAL NOT NULL, expires_at REAL NOT NULL, used_at REAL
);
CREATE INDEX mcp_login_links_server ON mcp_login_links (server, admin);
"""


# core:10 — roots for servers added at run time (`mcp add --root`, register_mcp), kept as a
# JSON list of paths like the other list columns; NULL for rows written before.
CORE_SCHEMA_10 = "ALTER TABLE mcp_servers ADD COLUMN roots TEXT"


# core:9 — the record of webhook ids keyed by the id alone on SQLite (issue 19): as a rowid
# table its TEXT key is a second B-tree beside the rows, so each claim in a burst of random
# ids wrote a page of both (a microbench of 12-id claims: ~20 % of the store thread's CPU
# and wall per id). PostgreSQL has no such form (its table is a heap with the key's index),
# so there it changes nothing.
WEBHOOK_IDS_9 = """
CREATE TABLE webhook_ids_by_id (id TEXT PRIMARY KEY, received_at REAL NOT NULL) WITHOUT ROWID;
INSERT INTO webhook_ids_by_id (id, received_at) SELECT id, received_at FROM webhook_ids;
DROP TABLE webhook_ids;
ALTER TABLE webhook_ids_by_id RENAME TO webhook_ids
"""


def migrate_9(conn: Conn) -> None:
    if conn.dialect == SQLITE:
        conn.script(WEBHOOK_IDS_9)


# core:11 — stored permission rules and remembered answers name the tool they are about by
# its origin (bothost.rules.origin), not only by the name the model saw, which another tool
# may take; the approvals record keeps it too. Rows written before get the origin their
# literal MCP name establishes (a tool part with no `_`), or `unknown` (an `allow` with it
# matches nothing): until 2026-12-03 `mcp__s__a_b` was `a.b`'s name as well as `a_b`'s.
CORE_SCHEMA_11 = """
ALTER TABLE permission_rules ADD COLUMN tool_origin TEXT;
ALTER TABLE approvals ADD COLUMN tool_origin TEXT
"""


def migrate_11(conn: Conn) -> None:
    from bothost.rules.origin import from_name  # a pure function of a name, no store in it

    conn.script(CORE_SCHEMA_11)
    for row in conn.query("SELECT id, tool FROM permission_rules"):
        origin = from_name(row["tool"])
        if origin is not None:
            conn.execute(
                "UPDATE permission_rules SET tool_origin = ? WHERE id = ?",
                [origin.text(), row["id"]],
            )


# core:13 — people and channels in stored rules and remembered answers are platform-qualified
# (bothost.identity): a bare `U0123ANA` also matched a webhook sender who claimed that id.
# A bare id of Slack's shape becomes `slack:ID` (every Slack id has it, and Slack's were the
# only ids a remembered answer named); any other cannot be placed, so a deny or ask keeps it
# on every platform (`*:ID`) and an allow names nobody (`unknown:ID`). The same reading is
# applied to rows read later (an older host sharing the store writes bare ids).
def migrate_13(conn: Conn) -> None:
    from bothost.rules.who import legacy  # a pure function of the row, no store in it

    for row in conn.query("SELECT id, who, action FROM permission_rules WHERE who IS NOT NULL"):
        try:
            who = json.loads(row["who"])
        except ValueError:
            continue  # unreadable: the rule store skips the row when it reads it
        if not isinstance(who, dict):
            continue
        new = legacy(who, row["action"])
        if new != who:
            conn.execute(
                "UPDATE permission_rules SET who = ? WHERE id = ?",
                [json.dumps(new, ensure_ascii=False), row["id"]],
            )


# core:14 — triage rules taught at run time, and shipped defaults taken out (issue 36;
# bothost.events.triage_store owns them). Core's, as `mutes` is: the tick reads them, and it
# runs whatever plugins are loaded. `unless` and `within` are quoted: keywords to some SQL.
CORE_SCHEMA_14 = """
CREATE TABLE triage_rules (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, match TEXT NOT NULL DEFAULT '{}',
    "unless" TEXT NOT NULL DEFAULT '[]', "within" TEXT NOT NULL DEFAULT '{}', priority TEXT,
    note TEXT NOT NULL DEFAULT '', removes TEXT, origin TEXT NOT NULL,
    added_by TEXT NOT NULL DEFAULT '', added_at REAL NOT NULL
);
CREATE UNIQUE INDEX triage_rules_removes ON triage_rules (removes);
"""


# core:15 — scheduled jobs (issue 38; bothost.schedules owns them): reminders and checks
# a person asked for, fired by the leading host when ``next_run`` comes. ``outbox`` keeps a
# check's output between its turn and its delivery, so a retry resends it instead of asking
# the model again; the due index makes the scheduler's poll one index probe.
CORE_SCHEMA_15 = """
CREATE TABLE schedule_jobs (
    id INTEGER PRIMARY KEY, owner TEXT NOT NULL, target TEXT NOT NULL, kind TEXT NOT NULL,
    text TEXT NOT NULL, at REAL, cron TEXT, tz TEXT NOT NULL, status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, created_at REAL NOT NULL,
    next_run REAL, last_fired_at REAL, outbox TEXT, cancelled_by TEXT
);
CREATE INDEX schedule_jobs_due ON schedule_jobs (status, next_run);
CREATE INDEX schedule_jobs_owner ON schedule_jobs (owner, status);
"""


# core:16 — a model call made for an MCP server's sampling request names the server (issue
# 37; bothost.agent.sampling): it is the person's (or the tick's) call too, so the other
# columns and the budgets stay as they were.
CORE_SCHEMA_16 = "ALTER TABLE llm_usage ADD COLUMN mcp_server TEXT"


# core:17 — the turns an older bothost's offline agent answered, marked as today's are (the
# ``offline`` flag in ``messages.data``: bothost.agent.history.OFFLINE), so a model configured
# later does not read them (issue 39). They are known by the offline agent's own words: its
# no-model line and the first line of its help, whole (a model quoting them is not one).
OFFLINE_REPLIES = (
    "No language model is configured, so I only understand commands (try `help`).%",
    "I am the offline agent: no language model is configured, %",
)


def migrate_17(conn: Conn) -> None:
    rows = conn.query(
        "SELECT id, data FROM messages WHERE turn_id IN (SELECT turn_id FROM messages"
        " WHERE role = 'assistant' AND (content LIKE ? OR content LIKE ?))",
        list(OFFLINE_REPLIES),
    )
    for row in list(rows):
        try:
            data = json.loads(row["data"]) if row["data"] else {}
        except ValueError:
            continue  # unreadable: history reads it as it is
        if isinstance(data, dict) and not data.get("offline"):
            data["offline"] = True
            conn.execute("UPDATE messages SET data = ? WHERE id = ?", [json.dumps(data), row["id"]])


# core:19 — the webhook-ids an older bothost recorded (``webhook_ids``) kept as the webhook
# platform's deliveries: a message's id is now taken by the host in ``platform_deliveries``
# (issue 35, bothost/host/inbox.py), and a sender that retries for days must still meet the
# id it sent before the upgrade. Event ids come along; they are pruned with the rest.
CORE_SCHEMA_19 = """
INSERT INTO platform_deliveries (platform, key, received_at)
SELECT 'webhook', id, received_at FROM webhook_ids WHERE true
ON CONFLICT (platform, key) DO NOTHING
"""


def core_migrations() -> list[Migration]:
    return [
        Migration("core", 1, sql(CORE_SCHEMA_1), "initial tables"),
        Migration("core", 2, sql(CORE_SCHEMA_2), "permission rules"),
        Migration("core", 3, sql(CORE_SCHEMA_3), "model usage"),
        Migration("core", 4, sql(CORE_SCHEMA_4), "OAuth of remote MCP servers"),
        Migration("core", 5, sql(CORE_SCHEMA_5), "conversation summaries"),
        Migration("core", 6, sql(CORE_SCHEMA_6), "mcp_servers.max_timeout"),
        Migration("core", 7, sql(CORE_SCHEMA_7), "leader-only servers, tick owners"),
        Migration("core", 8, sql(CORE_SCHEMA_8), "platform deliveries taken"),
        Migration("core", 9, migrate_9, "webhook ids keyed by the id alone"),
        Migration("core", 10, sql(CORE_SCHEMA_10), "mcp_servers.roots"),
        Migration("core", 11, migrate_11, "origins of stored rules and approvals"),
        Migration("core", 12, sql(CORE_SCHEMA_12), "login links of remote MCP servers"),
        Migration("core", 13, migrate_13, "platform-qualified ids in stored rules"),
        Migration("core", 14, sql(CORE_SCHEMA_14), "triage rules taught at run time"),
        Migration("core", 15, sql(CORE_SCHEMA_15), "scheduled jobs"),
        Migration("core", 16, sql(CORE_SCHEMA_16), "llm_usage.mcp_server"),
        Migration("core", 17, migrate_17, "offline agent turns marked"),
        Migration("core", 18, migrate_18, "usage figures that are no token counts mended"),
        Migration("core", 19, sql(CORE_SCHEMA_19), "older webhook ids kept as deliveries"),
    ]
