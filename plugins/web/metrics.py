"""``GET /metrics``: the host's figures in the Prometheus text format (version 0.0.4).

Most figures are computed from the store at scrape time — messages, turns, tool calls and
errors by tool, events by status, tick durations, briefing deliveries — so they survive
restarts and include what CLI processes did; they are counters as long as rows are kept.
MCP servers come from the running manager; the web parts add the counters they keep in
memory (webhook requests by outcome, outbound webhook deliveries, connected pages).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlite_utils

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def escape(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class Exposition:
    """Builds the text: one HELP/TYPE header per family, then its samples."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def family(self, name: str, kind: str, help_text: str,
               samples: Iterable[tuple[dict[str, Any], float]]) -> None:
        self.lines.append(f"# HELP {name} {help_text}")
        self.lines.append(f"# TYPE {name} {kind}")
        for labels, value in samples:
            self.sample(name, labels, value)

    def sample(self, name: str, labels: dict[str, Any], value: float) -> None:
        if labels:
            inner = ",".join(f'{k}="{escape(v)}"' for k, v in sorted(labels.items()))
            self.lines.append(f"{name}{{{inner}}} {float(value):g}")
        else:
            self.lines.append(f"{name} {float(value):g}")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def read_tables(db: sqlite_utils.Database) -> dict[str, Any]:
    q = db.conn.execute
    return {
        "messages": q("SELECT COALESCE(s.platform, 'unknown'), COUNT(*) FROM messages m"
                      " LEFT JOIN sessions s ON s.id = m.session_id WHERE m.role = 'user'"
                      " GROUP BY 1").fetchall(),
        "turns": q("SELECT COUNT(DISTINCT turn_id) FROM messages"
                   " WHERE turn_id IS NOT NULL").fetchone()[0],
        "tools": q("SELECT tool, COUNT(*), SUM(is_error), SUM(COALESCE(duration_ms, 0))"
                   " FROM tool_calls GROUP BY tool").fetchall(),
        "events": q("SELECT status, COUNT(*) FROM events GROUP BY status").fetchall(),
        "ticks": q("SELECT COUNT(*), COALESCE(SUM(finished_at - started_at), 0) FROM ticks"
                   " WHERE finished_at IS NOT NULL").fetchone(),
        "last_tick": q("SELECT finished_at - started_at, finished_at FROM ticks"
                       " WHERE finished_at IS NOT NULL ORDER BY id DESC LIMIT 1").fetchone(),
        "ticks_by_status": q("SELECT status, COUNT(*) FROM ticks GROUP BY status").fetchall(),
        "deliveries": q("SELECT status, COUNT(*) FROM deliveries GROUP BY status").fetchall(),
        "webhook_ids": q("SELECT COUNT(*) FROM webhook_ids").fetchone()[0],
    }


def mcp_rows(host: Any) -> list[Any]:
    if host.mcp is None or not hasattr(host.mcp, "status"):
        return []
    return list(host.mcp.status())


def counter_samples(counters: Any, metric: str, labels: tuple[str, ...]):
    for key, value in sorted(counters.items()):
        if key[0] == metric:
            yield dict(zip(labels, key[1:], strict=True)), value


async def render(host: Any, web: Any, webhook: Any, inbound: Any) -> str:
    """The whole exposition for one scrape."""
    t = await host.store.run(read_tables)
    out = Exposition()
    out.family("bothost_messages_total", "counter", "Messages people sent, by platform.",
               (({"platform": p}, n) for p, n in t["messages"]))
    out.family("bothost_turns_total", "counter", "Agent turns run.", [({}, t["turns"])])
    out.family("bothost_tool_calls_total", "counter", "Tool calls, by tool.",
               (({"tool": tool}, n) for tool, n, _, _ in t["tools"]))
    out.family("bothost_tool_errors_total", "counter", "Tool calls that ended in an error.",
               (({"tool": tool}, errors or 0) for tool, _, errors, _ in t["tools"]))
    out.family("bothost_tool_duration_seconds_total", "counter", "Time spent in tools.",
               (({"tool": tool}, (ms or 0) / 1000) for tool, _, _, ms in t["tools"]))
    servers = mcp_rows(host)
    out.family("bothost_mcp_server_up", "gauge", "1 when the MCP server is ready.",
               (({"server": s.name}, 1 if getattr(s, "state", "") == "ready" else 0)
                for s in servers))
    out.family("bothost_mcp_server_restarts_total", "counter", "Restarts of the MCP server.",
               (({"server": s.name}, getattr(s, "restarts", 0) or 0) for s in servers))
    out.family("bothost_events", "gauge", "Events in the queue, by status.",
               (({"status": s}, n) for s, n in t["events"]))
    count, total = t["ticks"]
    out.family("bothost_tick_duration_seconds", "summary", "Duration of finished ticks.", [])
    out.sample("bothost_tick_duration_seconds_count", {}, count)
    out.sample("bothost_tick_duration_seconds_sum", {}, total)
    last = t["last_tick"]
    out.family("bothost_tick_last_duration_seconds", "gauge", "Duration of the last tick.",
               [({}, last[0] if last else 0)])
    out.family("bothost_tick_last_finished_timestamp_seconds", "gauge",
               "When the last tick finished.", [({}, last[1] if last else 0)])
    out.family("bothost_ticks_total", "counter", "Ticks, by outcome.",
               (({"status": s}, n) for s, n in t["ticks_by_status"]))
    deliveries = dict(t["deliveries"])
    out.family("bothost_briefings_delivered_total", "counter", "Briefing deliveries made.",
               [({}, deliveries.get("delivered", 0))])
    out.family("bothost_briefings_failed_total", "counter",
               "Briefing deliveries given up after their attempts.",
               [({}, deliveries.get("failed", 0))])
    out.family("bothost_briefing_deliveries", "gauge", "Briefing deliveries, by status.",
               (({"status": s}, n) for s, n in sorted(deliveries.items())))
    out.family("bothost_web_briefings_total", "counter",
               "Briefings this process delivered to web pages, by outcome.",
               counter_samples(web.counters, "briefings", ("outcome",)))
    out.family("bothost_web_chats_total", "counter", "Chat requests from the web API.",
               counter_samples(web.counters, "chat", ("mode",)))
    out.family("bothost_web_clients", "gauge", "Open web pages (live streams).",
               [({}, web.hub.clients())])
    out.family("bothost_webhook_requests_total", "counter",
               "Inbound webhook requests, by route and outcome.",
               (({"route": k[0], "outcome": k[1]}, v) for k, v in sorted(inbound.counters.items())))
    out.family("bothost_webhook_deliveries_total", "counter",
               "Outbound signed webhook POSTs, by target and outcome.",
               counter_samples(webhook.counters, "webhook_out", ("target", "outcome")))
    out.family("bothost_webhook_ids", "gauge", "Webhook ids remembered for dedupe.",
               [({}, t["webhook_ids"])])
    http = getattr(host, "http", None)
    guard = getattr(http, "guard", None)
    if guard is not None and guard.server is not None:
        out.family("bothost_http_connections", "gauge", "Open HTTP connections.",
                   [({}, guard.open_count())])
        out.family("bothost_http_connection_cap", "gauge",
                   "Most HTTP connections kept open (from the open-file limit).",
                   [({}, guard.cap)])
        out.family("bothost_http_connections_closed_total", "counter",
                   "Connections the listener closed early: evicted at the cap, refused with "
                   "503, or a body that did not arrive in time.",
                   (({"reason": reason}, n) for reason, n in sorted(guard.counts.items())))
    write = host.store.health.report()
    out.family("bothost_store_writable", "gauge",
               "1 unless the last write failed with a storage error (disk full, I/O, corrupt).",
               [({}, 1 if write["ok"] else 0)])
    return out.text()
