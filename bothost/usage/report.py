"""Reading usage back: sums by person, day, model or kind, and their cost.

Cost is worked out when the figures are read, from the ``usage.prices`` of the running
config, so a price table added later prices the past too. A call of a model the table does
not list adds no cost and is counted in ``unpriced``, so a total never claims a precision it
does not have. Each read is one query grouped by its key and the model (the price belongs
to the model), folded in Python.
"""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bothost.config import Price
from bothost.config.schema import parse_duration

DAY = 86400.0  # POSIX time has exactly this many seconds in every UTC day
# grouping keys: our own SQL fragments, chosen by name, never text from a user
BY = {
    "user": "COALESCE(user_key, kind)",  # the tick's calls show as "tick"
    "day": "day",
    "model": "model",
    "kind": "kind",
}
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
FIGURES = ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens")
EARLIEST = 0.0  # 1970-01-01 UTC: the store's times are POSIX seconds, none is earlier


@dataclass(frozen=True)
class UsageRow:
    """The calls of one person, day, model or kind, summed."""

    key: str
    calls: int = 0
    input: int = 0  # every prompt token, cached ones included
    output: int = 0
    cached: int = 0
    cache_write: int = 0
    estimated: int = 0  # calls whose figures we counted because the provider reported none
    cost: float = 0.0  # of the calls whose model has a price
    unpriced: int = 0  # calls of models usage.prices does not list

    @property
    def tokens(self) -> int:
        return self.input + self.output


def day_start(now: float) -> float:
    """The start of the UTC day holding ``now``."""
    return now - now % DAY


def utc_day(at: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(at))


def cost_of(price: Price, input: int, output: int, cached: int, cache_write: int) -> float:
    """What these tokens cost at ``price`` (per million tokens)."""
    base = price.input or 0.0
    plain = max(0, input - cached - cache_write)
    read = base if price.cached is None else price.cached
    write = base if price.cache_write is None else price.cache_write
    out = price.output or 0.0
    return (plain * base + cached * read + cache_write * write + output * out) / 1e6


def totals(
    db: Any,
    by: str,
    prices: Mapping[str, Price],
    since: float = 0.0,
    until: float | None = None,
    where: str = "",
    params: Sequence[Any] = (),
) -> list[UsageRow]:
    """Usage from ``since`` (epoch seconds) grouped ``by`` a key of :data:`BY`, by key.

    ``where`` is one more condition of ours (``AND user_key = ?``) with its ``params``.
    """
    bound = "" if until is None else " AND at < ?"
    # a figure below zero counts as none, so no row can lower a total (a budget): the meter
    # records only token counts, but a store written before it checked them may hold some
    sums = ", ".join(f"SUM(CASE WHEN {f} > 0 THEN {f} ELSE 0 END)" for f in FIGURES)
    sql = (
        f"SELECT {BY[by]}, model, COUNT(*), {sums}, SUM(estimated) FROM llm_usage"
        f" WHERE at >= ?{bound} {where} GROUP BY 1, 2"
    )
    args = [since, *([] if until is None else [until]), *params]
    rows: dict[str, UsageRow] = {}
    for key, model, *figures in db.execute(sql, args).fetchall():
        calls, input, output, cached, write, estimated = (int(f or 0) for f in figures)
        price = prices.get(model)
        row = rows.get(key) or UsageRow(str(key))
        rows[key] = replace(
            row,
            calls=row.calls + calls,
            input=row.input + input,
            output=row.output + output,
            cached=row.cached + cached,
            cache_write=row.cache_write + write,
            estimated=row.estimated + estimated,
            cost=row.cost + (cost_of(price, input, output, cached, write) if price else 0.0),
            unpriced=row.unpriced + (0 if price else calls),
        )
    return [rows[key] for key in sorted(rows)]


def total(rows: Sequence[UsageRow], key: str = "total") -> UsageRow:
    """The rows added up into one."""
    out = UsageRow(key)
    for row in rows:
        out = replace(
            out,
            calls=out.calls + row.calls,
            input=out.input + row.input,
            output=out.output + row.output,
            cached=out.cached + row.cached,
            cache_write=out.cache_write + row.cache_write,
            estimated=out.estimated + row.estimated,
            cost=out.cost + row.cost,
            unpriced=out.unpriced + row.unpriced,
        )
    return out


def parse_since(text: str, now: float) -> float:
    """Epoch seconds from ``today``, a UTC date (``2026-12-01``) or a duration back
    from now (``24h``, ``7d``); ValueError otherwise."""
    text = text.strip()
    try:
        if text == "today":
            return day_start(now)
        if DATE.match(text):
            start = float(calendar.timegm(time.strptime(text, "%Y-%m-%d")))
        else:
            start = now - parse_duration(text)
    except ValueError:
        raise ValueError(
            "expected 'today', a UTC date such as 2026-12-01 or a duration such as 7d, "
            f"got {text!r}"
        ) from None
    # a start before the epoch printed a negative year ("since -271764-03-22") or overflowed
    # time_t; one after now reports nothing, which says nothing about the past
    if not start >= EARLIEST:
        raise ValueError(f"{text!r} goes back before 1970-01-01, the earliest start")
    if start > now:
        raise ValueError(f"{text!r} is after now; give a start in the past")
    return start
