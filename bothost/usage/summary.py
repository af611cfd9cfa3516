"""What ``bothost usage`` and the dashboard show: usage grouped one way, its total, and how
much of each daily budget today has used.

:func:`summarise` reads (one job on the store's thread); :func:`render` turns the result
into the command's table. A ``~`` marks figures that include estimates; a cost column
appears only with a price table, and ``+?`` marks a cost that leaves out unpriced models.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

from bothost.config import UsageConfig
from bothost.usage import report
from bothost.usage.attribution import TICK, Attribution
from bothost.usage.budget import scopes, used


@dataclass(frozen=True)
class BudgetStatus:
    """One daily budget and what today (UTC) has used of it."""

    name: str  # the key under usage.budgets
    tokens: int | None  # the limits
    cost: float | None
    used: report.UsageRow  # for user_daily: the person who used the most today
    who: str | None = None  # that person

    @property
    def spent(self) -> bool:
        return (self.tokens is not None and self.used.tokens >= self.tokens) or (
            self.cost is not None and self.used.cost >= self.cost
        )


@dataclass(frozen=True)
class Summary:
    by: str
    since: float
    currency: str
    priced: bool  # whether usage.prices lists any model
    rows: list[report.UsageRow]
    total: report.UsageRow
    budgets: list[BudgetStatus] = field(default_factory=list)
    day: str = ""  # today's UTC date, for the budgets

    def as_json(self) -> dict[str, Any]:
        def row(r: report.UsageRow) -> dict[str, Any]:
            return {**dataclasses.asdict(r), "tokens": r.tokens}

        return {
            "by": self.by,
            "since": self.since,
            "currency": self.currency,
            "priced": self.priced,
            "rows": [row(r) for r in self.rows],
            "total": row(self.total),
            "day": self.day,
            "budgets": [
                {
                    "name": b.name,
                    "tokens": b.tokens,
                    "cost": b.cost,
                    "used": row(b.used),
                    "who": b.who,
                    "spent": b.spent,
                }
                for b in self.budgets
            ],
        }


def budget_statuses(db: Any, config: UsageConfig, now: float) -> list[BudgetStatus]:
    """Every budget set in config with today's use (for ``user_daily``, the top user's)."""
    budgets = config.budgets
    # the budgets a tick's call counts against are the tick's and the global one
    statuses = [
        BudgetStatus(
            scope.key, scope.budget.tokens, scope.budget.cost, used(db, config, scope, now)
        )
        for scope in reversed(scopes(config, Attribution(TICK)))
    ]
    if budgets.user_daily.set:
        people = report.totals(
            db, "user", config.prices, report.day_start(now), where="AND user_key IS NOT NULL"
        )
        top = max(people, key=lambda r: (r.tokens, r.cost), default=report.UsageRow("-"))
        statuses.append(
            BudgetStatus(
                "user_daily",
                budgets.user_daily.tokens,
                budgets.user_daily.cost,
                top,
                top.key if people else None,
            )
        )
    return statuses


def summarise(db: Any, config: UsageConfig, by: str, since: float, now: float) -> Summary:
    rows = report.totals(db, by, config.prices, since)
    return Summary(
        by=by,
        since=since,
        currency=config.currency,
        priced=bool(config.prices),
        rows=rows,
        total=report.total(rows),
        budgets=budget_statuses(db, config, now),
        day=report.utc_day(now),
    )


def figure(value: int, estimated: int) -> str:
    return f"{'~' if estimated else ''}{value:,}"


def money(row: report.UsageRow) -> str:
    return f"{row.cost:,.2f}" + ("+?" if row.unpriced else "")


def limit(status: BudgetStatus, currency: str) -> str:
    parts = []
    if status.tokens is not None:
        parts.append(f"{status.used.tokens:,} of {status.tokens:,} tokens")
    if status.cost is not None:
        parts.append(f"{status.used.cost:,.2f} of {status.cost:,.2f} {currency}")
    return ", ".join(parts)


def render(summary: Summary) -> str:
    """The table ``bothost usage`` prints."""
    since = time.strftime("%Y-%m-%d %H:%M", time.gmtime(summary.since))
    lines = [f"Model usage by {summary.by} since {since} UTC"]
    if not summary.rows:
        lines.append("No model calls recorded.")
    else:
        header = ["calls", "input", "cached", "output", "tokens"]
        if summary.priced:
            header.append(f"cost {summary.currency}")
        table = [[summary.by, *header]]
        for row in [*summary.rows, summary.total]:
            cells = [
                row.key,
                f"{row.calls:,}",
                figure(row.input, row.estimated),
                figure(row.cached, 0),
                figure(row.output, row.estimated),
                figure(row.tokens, row.estimated),
            ]
            if summary.priced:
                cells.append(money(row))
            table.append(cells)
        widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
        for r in table:
            first = r[0].ljust(widths[0])
            rest = "  ".join(c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True))
            lines.append(f"{first}  {rest}".rstrip())
        if summary.total.estimated:
            lines.append("~ includes estimates: the provider reported no usage for some calls.")
        if summary.priced and summary.total.unpriced:
            lines.append("+? leaves out models that usage.prices does not list.")
    for status in summary.budgets:
        who = f" (most: {status.who})" if status.name == "user_daily" and status.who else ""
        state = " — spent" if status.spent else ""
        lines.append(
            f"Budget {status.name} today ({summary.day} UTC): "
            f"{limit(status, summary.currency)}{who}{state}"
        )
    return "\n".join(lines)
