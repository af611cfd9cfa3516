"""``GET /metrics``: the host's figures in the Prometheus text format (version 0.0.4).

Most figures are computed from the store at scrape time (``host.queries.figures()``) —
messages, turns, tool calls and errors by tool, events by status, tick durations, briefing
deliveries — so they survive restarts and include what CLI processes did; they are
counters as long as rows are kept. MCP servers, HTTP connections and whether the store can
write come from the running host, through ``host.queries`` too; the web parts add the
counters they keep in memory (webhook requests by outcome, outbound webhook deliveries,
connected pages).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from bothost.api import HostApi
from bothost.queries import Figures

if TYPE_CHECKING:  # the web parts that keep counters in memory
    from bothost.plugins.web.outbound import WebhookPlatform
    from bothost.plugins.web.platform import WebPlatform
    from bothost.plugins.web.webhooks import WebhookRoutes

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def escape(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class Exposition:
    """Builds the text: one HELP/TYPE header per family, then its samples."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def family(self, name: str, kind: str, help_text: str, samples: Samples) -> None:
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


Samples = Iterable[tuple[dict[str, Any], float]]


def counter_samples(
    counters: Counter[tuple[str, ...]], metric: str, labels: tuple[str, ...]
) -> Iterator[tuple[dict[str, Any], float]]:
    for key, value in sorted(counters.items()):
        if key[0] == metric:
            yield dict(zip(labels, key[1:], strict=True)), value


def usage_families(out: Exposition, t: Figures) -> None:
    """Model calls and tokens by model (cached ones too), cost where usage.prices has one."""
    models = t.llm_by_model
    out.family(
        "bothost_llm_calls_total",
        "counter",
        "Model calls, by model.",
        (({"model": r.key}, r.calls) for r in models),
    )
    out.family(
        "bothost_llm_calls_by_kind_total",
        "counter",
        "Model calls, by whose they were: turn (a person's), tick, other.",
        (({"kind": r.key}, r.calls) for r in t.llm_by_kind),
    )
    out.family(
        "bothost_llm_tokens_total",
        "counter",
        "Model tokens, by model and type (input includes cached; cached and cache_write "
        "are parts of input).",
        (
            ({"model": r.key, "type": kind}, getattr(r, kind))
            for r in models
            for kind in ("input", "output", "cached", "cache_write")
        ),
    )
    out.family(
        "bothost_llm_estimated_calls_total",
        "counter",
        "Model calls whose tokens we estimated (the provider reported none).",
        (({"model": r.key}, r.estimated) for r in models),
    )
    out.family(
        "bothost_llm_cost_total",
        "counter",
        "Cost of model calls from usage.prices, by model (priced models only).",
        (({"model": r.key, "currency": t.currency}, r.cost) for r in models if not r.unpriced),
    )


async def render(
    host: HostApi, web: WebPlatform, webhook: WebhookPlatform, inbound: WebhookRoutes
) -> str:
    """The whole exposition for one scrape."""
    t = await host.queries.figures()
    out = Exposition()
    out.family(
        "bothost_messages_total",
        "counter",
        "Messages people sent, by platform.",
        (({"platform": p}, n) for p, n in t.messages_by_platform.items()),
    )
    out.family("bothost_turns_total", "counter", "Agent turns run.", [({}, t.turns)])
    out.family(
        "bothost_tool_calls_total",
        "counter",
        "Tool calls, by tool.",
        (({"tool": s.tool}, s.calls) for s in t.tools),
    )
    out.family(
        "bothost_tool_errors_total",
        "counter",
        "Tool calls that ended in an error.",
        (({"tool": s.tool}, s.errors) for s in t.tools),
    )
    out.family(
        "bothost_tool_duration_seconds_total",
        "counter",
        "Time spent in tools.",
        (({"tool": s.tool}, s.duration_ms / 1000) for s in t.tools),
    )
    usage_families(out, t)
    servers = host.queries.mcp_servers()
    out.family(
        "bothost_mcp_server_up",
        "gauge",
        "1 when the MCP server is ready.",
        (({"server": s.name}, 1 if s.state == "ready" else 0) for s in servers),
    )
    out.family(
        "bothost_mcp_server_restarts_total",
        "counter",
        "Restarts of the MCP server.",
        (({"server": s.name}, s.restarts) for s in servers),
    )
    out.family(
        "bothost_events",
        "gauge",
        "Events in the queue, by status.",
        (({"status": s}, n) for s, n in t.events_by_status.items()),
    )
    held = await host.queries.held_sources()
    out.family(
        "bothost_events_held",
        "gauge",
        "1 for each source held at tick.max_pending_per_source (its new events wait).",
        (({"source": s}, 1) for s in held),
    )
    out.family("bothost_tick_duration_seconds", "summary", "Duration of finished ticks.", [])
    out.sample("bothost_tick_duration_seconds_count", {}, t.finished_ticks)
    out.sample("bothost_tick_duration_seconds_sum", {}, t.tick_seconds)
    last = t.last_tick
    duration = last.finished_at - last.started_at if last and last.finished_at else 0
    out.family(
        "bothost_tick_last_duration_seconds",
        "gauge",
        "Duration of the last tick.",
        [({}, duration)],
    )
    out.family(
        "bothost_tick_last_finished_timestamp_seconds",
        "gauge",
        "When the last tick finished.",
        [({}, (last.finished_at or 0) if last else 0)],
    )
    out.family(
        "bothost_ticks_total",
        "counter",
        "Ticks, by outcome.",
        (({"status": s}, n) for s, n in t.ticks_by_status.items()),
    )
    deliveries = t.deliveries_by_status
    out.family(
        "bothost_briefings_delivered_total",
        "counter",
        "Briefing deliveries made.",
        [({}, deliveries.get("delivered", 0))],
    )
    out.family(
        "bothost_briefings_failed_total",
        "counter",
        "Briefing deliveries given up after their attempts.",
        [({}, deliveries.get("failed", 0))],
    )
    out.family(
        "bothost_briefing_deliveries",
        "gauge",
        "Briefing deliveries, by status.",
        (({"status": s}, n) for s, n in sorted(deliveries.items())),
    )
    out.family(
        "bothost_web_briefings_total",
        "counter",
        "Briefings this process delivered to web pages, by outcome.",
        counter_samples(web.counters, "briefings", ("outcome",)),
    )
    out.family(
        "bothost_web_chats_total",
        "counter",
        "Chat requests from the web API.",
        counter_samples(web.counters, "chat", ("mode",)),
    )
    out.family(
        "bothost_web_clients", "gauge", "Open web pages (live streams).", [({}, web.hub.clients())]
    )
    out.family(
        "bothost_webhook_requests_total",
        "counter",
        "Inbound webhook requests, by route and outcome.",
        (({"route": k[0], "outcome": k[1]}, v) for k, v in sorted(inbound.counters.items())),
    )
    out.family(
        "bothost_webhook_deliveries_total",
        "counter",
        "Outbound signed webhook POSTs, by target and outcome.",
        counter_samples(webhook.counters, "webhook_out", ("target", "outcome")),
    )
    out.family(
        "bothost_webhook_ids", "gauge", "Webhook ids remembered for dedupe.", [({}, t.webhook_ids)]
    )
    connections = host.queries.connections()
    if connections is not None:
        out.family(
            "bothost_http_connections", "gauge", "Open HTTP connections.", [({}, connections.open)]
        )
        out.family(
            "bothost_http_connection_cap",
            "gauge",
            "Most HTTP connections kept open (from the open-file limit).",
            [({}, connections.cap)],
        )
        out.family(
            "bothost_http_connections_closed_total",
            "counter",
            "Connections the listener closed early: evicted at the cap, refused with "
            "503, or a body that did not arrive in time.",
            (({"reason": reason}, n) for reason, n in sorted(connections.closed.items())),
        )
    out.family(
        "bothost_store_writable",
        "gauge",
        "1 unless the last write failed with a storage error (disk full, I/O, corrupt).",
        [({}, 1 if host.queries.store_writable() else 0)],
    )
    return out.text()
