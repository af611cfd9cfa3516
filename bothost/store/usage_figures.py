"""core:18 — the usage figures an older bothost stored, made token counts.

Before issue 34 a host wrote whatever a provider reported into ``llm_usage``: text, a
fraction, 1e30, a negative, a count past any context window. SQLite's type affinity kept
such values in the INTEGER columns, where totals summed a stored 1e30 (text and negatives
they count as none) and PostgreSQL's ``bigint`` refuses them (``bothost db import`` ended
on the first one). The migration rewrites each row as the meter takes such a report today
(``bothost.llm.base.checked``): a figure that is no token count counts as nothing (0),
cached figures that add up to more than the whole prompt count as nothing too, and the row
is kept and marked ``estimated``, so ``bothost usage`` shows a ``~`` over it. Valid figures
are left as they were. A host older than core:18 refuses to open the store afterwards
(:mod:`bothost.store.version`), so no such row is written again.
"""

from __future__ import annotations

from typing import Any

from bothost.store.conn import SQLITE, Conn

# bothost.llm.base.MAX_CALL_TOKENS when core:18 was written: the most tokens one figure of
# one call can be (a migration keeps the rule it shipped with; the store is below llm)
MAX_FIGURE = 10_000_000
FIGURES = ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens")


def usage_figure(value: Any) -> int:
    """``value`` if it is a token count as the meter takes one, else 0 (counted as none)."""
    # type(...) is int, not isinstance: a bool is an int subclass and no count
    return value if type(value) is int and 0 <= value <= MAX_FIGURE else 0


def mended(figures: tuple[Any, ...]) -> tuple[int, ...]:
    """A row's four figures (input, output, cached, cache_write) as token counts."""
    input, output, cached, write = (usage_figure(f) for f in figures)
    if cached + write > input:  # the cached part of a prompt cannot be more than the prompt
        cached = write = 0
    return input, output, cached, write


def suspects(conn: Conn) -> str:
    """The rows that may hold a figure that is no token count (the rest need no look)."""
    checks = [f"{f} < 0 OR {f} > {MAX_FIGURE}" for f in FIGURES]
    if conn.dialect == SQLITE:  # any type fits any column there: text, a fraction
        checks += [f"typeof({f}) != 'integer'" for f in FIGURES]
    # CASE tests in order, so the sum is taken only of figures in range (two figures near
    # bigint's top would overflow it on PostgreSQL and end the migration)
    return (
        f"SELECT id, {', '.join(FIGURES)} FROM llm_usage WHERE CASE WHEN {' OR '.join(checks)}"
        " THEN 1 WHEN cached_tokens + cache_write_tokens > input_tokens THEN 1 ELSE 0 END = 1"
    )


def migrate_18(conn: Conn) -> None:
    for row in conn.execute(suspects(conn)).fetchall():
        conn.execute(
            "UPDATE llm_usage SET input_tokens = ?, output_tokens = ?, cached_tokens = ?,"
            " cache_write_tokens = ?, estimated = 1 WHERE id = ?",
            [*mended(tuple(row[1:])), row[0]],
        )
