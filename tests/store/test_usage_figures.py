"""Usage rows an older host wrote with figures that are no token counts (issue 34: text, a
fraction, 1e30, a flag, a negative) are made valid when the store is migrated (core:18), so
a SQLite home holding them still moves to PostgreSQL whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bothost.plugins.web.signing import new_secret

from bothost.llm.base import MAX_CALL_TOKENS, UsageReportError, token_count
from bothost.store import Store, core_migrations
from bothost.store.dump import SKIPPED_ROWS
from bothost.store.usage_figures import usage_figure
from bothost.usage import report
from tests.conftest import both_backends
from tests.store.test_dump import (
    configure,
    invoke,
    migrations_of,
    tables,
    use_with_fake_model,
)

OLD = 17  # the last core migration before usage figures were made valid
NOON = 1_796_126_400.0  # 2026-12-01 12:00 UTC
COLUMNS = (
    "at, day, kind, provider, model, input_tokens, output_tokens, cached_tokens,"
    " cache_write_tokens, estimated, user_key"
)
# (input, output, cached, cache_write) as an older host stored what a provider reported
VALID = [(1500, 20, 0, 0), (100, 10, 20, 30)]
BROKEN_ANYWHERE = [  # what PostgreSQL's bigint holds too
    (-7, 5, 0, 0),
    (2**40, 6, 0, 0),  # a whole number past any call's context
    (100, 10, 80, 60),  # more cached than the whole prompt
]
BROKEN_IN_SQLITE = [  # what only SQLite's type affinity keeps in an INTEGER column
    ("abc", 1, 0, 0),
    (1.5, 2, 0, 0),
    (1e30, 3, 0, 0),
    ("true", 4, 0, 0),
    (5, "NaN", 0, 0),
]
# each broken row as core:18 leaves it: figures that are no token count become 0, and
# cached figures that exceed the prompt do too; the row is marked estimated
MENDED = {
    (-7, 5, 0, 0): (0, 5, 0, 0),
    (2**40, 6, 0, 0): (0, 6, 0, 0),
    (100, 10, 80, 60): (100, 10, 0, 0),
    ("abc", 1, 0, 0): (0, 1, 0, 0),
    (1.5, 2, 0, 0): (0, 2, 0, 0),
    (1e30, 3, 0, 0): (0, 3, 0, 0),
    ("true", 4, 0, 0): (0, 4, 0, 0),
    (5, "NaN", 0, 0): (5, 0, 0, 0),
}


def old_store(target: Path | str, figures: list[tuple]) -> None:
    """A store as a bothost of core:17 left it, with usage rows of ``figures``."""
    store = Store(target, [m for m in core_migrations() if m.number <= OLD])
    try:
        rows = [
            (NOON, "2026-12-01", "turn", "openai", "m", *f, 0, f"test:{n}")
            for n, f in enumerate(figures)
        ]
        store.call(
            lambda db: db.executemany(
                f"INSERT INTO llm_usage ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
            )
        )
    finally:
        store.close()


def usage_rows(target: Path | str) -> dict[str, tuple]:
    """The usage rows the test wrote, by user key: the four figures and ``estimated``."""
    store = Store(target, core_migrations())
    try:
        rows = store.call(
            lambda db: db.execute(
                "SELECT user_key, input_tokens, output_tokens, cached_tokens,"
                " cache_write_tokens, estimated FROM llm_usage WHERE user_key LIKE 'test:%'"
            ).fetchall()
        )
    finally:
        store.close()
    return {key: tuple(rest) for key, *rest in rows}


def expected(figures: list[tuple]) -> dict[str, tuple]:
    return {f"test:{n}": (*MENDED[f], 1) if f in MENDED else (*f, 0) for n, f in enumerate(figures)}


def test_an_old_sqlite_home_with_broken_usage_figures_moves_to_postgresql_whole(
    home, tmp_path, postgres_url
):
    figures = [*VALID, *BROKEN_ANYWHERE, *BROKEN_IN_SQLITE]
    old_store(home / "bothost.db", figures)
    secret = new_secret()
    llm_url = use_with_fake_model(home, tmp_path, secret)  # this bothost opens the old home
    sqlite_config = configure(tmp_path, secret, llm_url, None)
    assert usage_rows(home / "bothost.db") == expected(figures)

    dump = tmp_path / "dump.jsonl"
    counts = json.loads(invoke(sqlite_config, home, "db", "export", str(dump), "--json").stdout)
    pg_config = configure(tmp_path, secret, llm_url, postgres_url)
    imported = invoke(pg_config, home, "db", "import", str(dump), "--json")
    assert json.loads(imported.stdout)["tables"] == counts["tables"]
    assert counts["tables"]["llm_usage"] > len(figures)  # the new host's calls too

    migrations = migrations_of(pg_config, home)
    before, after = tables(home / "bothost.db", migrations), tables(postgres_url, migrations)
    before.update({t: [] for t in SKIPPED_ROWS})
    after.update({t: [] for t in SKIPPED_ROWS})
    assert after == before


@both_backends
def test_core_18_makes_every_usage_figure_a_token_count(store_target, backend):
    figures = [*VALID, *BROKEN_ANYWHERE, *(BROKEN_IN_SQLITE if backend == "sqlite" else [])]
    old_store(store_target, figures)
    assert usage_rows(store_target) == expected(figures)

    # what a total counts of the valid rows is what it counted before: they are untouched
    store = Store(store_target, core_migrations())
    try:
        totals = store.call(lambda db: report.totals(db, "model", {}, since=0.0))
    finally:
        store.close()
    mended = [MENDED.get(f, f) for f in figures]
    assert [(t.calls, t.input, t.output) for t in totals] == [
        (len(figures), sum(f[0] for f in mended), sum(f[1] for f in mended))
    ]
    assert totals[0].estimated == len(MENDED) - (0 if backend == "sqlite" else 5)


@pytest.mark.parametrize(
    "value", [0, 7, MAX_CALL_TOKENS, MAX_CALL_TOKENS + 1, -1, 1.5, 7.0, 1e30, "abc", "12", True]
)
def test_core_18_takes_a_figure_as_the_meter_takes_a_reported_one(value):
    try:
        taken = token_count("input", value)
    except UsageReportError:
        taken = None
    assert usage_figure(value) == (0 if taken is None else taken)
