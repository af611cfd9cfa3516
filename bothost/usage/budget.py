"""Daily budgets: whether a model call may be made, and what to say when it may not.

Three optional limits per UTC day (``usage.budgets``), each in tokens (input + output),
cost, or both: ``user_daily`` for each person's turns, ``global_daily`` for everything the
bot spends (people and the tick), ``tick_daily`` for the tick agent. The tick is under its
own budget and the global one, never a person's; so a busy day of chat can stop the tick's
model (it falls back to ``tick.rules``), and a tick cannot eat the people's day unless the
global budget lets it. A budget is spent once today's usage reaches it; the next call is
refused before anything is sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bothost.config import Budget, UsageConfig
from bothost.llm.base import BudgetSpentError
from bothost.usage import report
from bothost.usage.attribution import TICK, Attribution


@dataclass(frozen=True)
class Scope:
    """One budget as it applies to a call: which, its limit, and what counts against it."""

    name: str  # user | global | tick
    key: str  # the config key under usage.budgets
    budget: Budget
    where: str = ""
    params: tuple[Any, ...] = ()


def scopes(config: UsageConfig, who: Attribution) -> list[Scope]:
    """The budgets set in config that a call by ``who`` counts against."""
    budgets = config.budgets
    found = []
    if who.kind == TICK:
        found.append(Scope("tick", "tick_daily", budgets.tick_daily, "AND kind = ?", (TICK,)))
    elif who.user:
        found.append(
            Scope("user", "user_daily", budgets.user_daily, "AND user_key = ?", (who.user,))
        )
    found.append(Scope("global", "global_daily", budgets.global_daily))
    return [s for s in found if s.budget.set]


def used(db: Any, config: UsageConfig, scope: Scope, now: float) -> report.UsageRow:
    """What counts against ``scope`` so far today (UTC)."""
    rows = report.totals(
        db, "kind", config.prices, report.day_start(now), where=scope.where, params=scope.params
    )
    return report.total(rows, scope.name)


def spent(budget: Budget, usage: report.UsageRow) -> bool:
    return (budget.tokens is not None and usage.tokens >= budget.tokens) or (
        budget.cost is not None and usage.cost >= budget.cost
    )


def refusal(db: Any, config: UsageConfig, who: Attribution, now: float) -> BudgetSpentError | None:
    """Why a call by ``who`` may not be made now, or None if it may."""
    for scope in scopes(config, who):
        usage = used(db, config, scope, now)
        if spent(scope.budget, usage):
            return spent_error(scope, usage, config.currency)
    return None


def describe(budget: Budget, usage: report.UsageRow, currency: str) -> str:
    """``"201,334 of 200,000 tokens"`` / ``"20.31 of 20.00 USD"`` (the figure that ran out)."""
    if budget.tokens is not None and usage.tokens >= budget.tokens:
        return f"{usage.tokens:,} of {budget.tokens:,} tokens"
    return f"{usage.cost:,.2f} of {budget.cost or 0:,.2f} {currency}"


WHOSE = {"user": "Your", "global": "The bot's", "tick": "The tick's"}


def spent_error(scope: Scope, usage: report.UsageRow, currency: str) -> BudgetSpentError:
    figures = describe(scope.budget, usage, currency)
    message = (
        f"{WHOSE[scope.name]} daily model budget is spent ({figures} used today, UTC), so "
        f"I did not ask the model. It renews at 00:00 UTC; an admin can raise "
        f"usage.budgets.{scope.key}."
    )
    whose = "the tick's" if scope.name == "tick" else "the bot's"
    footer = (
        f"Sorted by tick.rules, not the model: {whose} daily model budget is spent "
        f"({figures}; usage.budgets.{scope.key})."
    )
    return BudgetSpentError(message, scope.name, footer)
