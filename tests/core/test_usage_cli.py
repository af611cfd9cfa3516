"""``bothost usage`` as a user runs it: the installed console script over a database holding
a person's, the tick's and an unpriced model's calls, with prices and budgets in the config."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from bothost.cli import cli

BOTHOST = Path(sys.executable).parent / "bothost"  # the console script pip installed


async def bothost(home, config, *args):
    process = await asyncio.create_subprocess_exec(
        str(BOTHOST),
        "--config",
        str(config),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "BOTHOST_HOME": str(home)},
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode, out.decode(), err.decode()


def seed(home, rows):
    """Usage rows from earlier days and the tick, as the host would have written them."""
    from bothost.store import Store, core_migrations
    from bothost.usage.report import utc_day

    store = Store(home / "bothost.db", core_migrations())
    for at, kind, user, model, input_, output, cached in rows:
        row = (at, utc_day(at), kind, model, input_, output, cached, user)
        store.call(
            lambda db, r=row: db.execute(
                "INSERT INTO llm_usage (at, day, kind, provider, model, input_tokens,"
                " output_tokens, cached_tokens, user_key) VALUES (?, ?, ?, 'openai', ?, ?, ?, ?, ?)",
                r,
            )
        )
    store.close()


CONFIG = (
    "llm: {provider: openai, model: gpt-a, api_key: test-key}\n"
    "mcp: {servers: {weather: {enabled: false}}}\n"
    "usage:\n"
    "  prices: {gpt-a: {input: 2.0, output: 10.0, cached: 0.5}}\n"
    "  budgets: {global_daily: {tokens: 100000}, user_daily: {cost: 1.0}}\n"
)


async def test_usage_by_user_and_model_from_the_installed_cli(home, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    now = time.time()
    seed(
        home,
        [
            (now - 60, "turn", "console:ana", "gpt-a", 1000, 200, 400),
            (now - 3 * 86400, "tick", None, "gpt-a", 500, 50, 0),
            (now - 3 * 86400, "turn", "slack:U1", "gpt-old", 100, 10, 0),
        ],
    )

    code, out, err = await bothost(home, config, "usage", "--by", "user")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("Model usage by user since ")
    assert lines[1].split() == [
        "user",
        "calls",
        "input",
        "cached",
        "output",
        "tokens",
        "cost",
        "USD",
    ]
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:6]}
    # 600 plain at 2.0, 400 cached at 0.5, 200 out at 10.0 per million = 0.0034
    assert rows["console:ana"] == ["1", "1,000", "400", "200", "1,200", "0.00"]
    assert rows["tick"] == ["1", "500", "0", "50", "550", "0.00"]
    assert rows["slack:U1"] == ["1", "100", "0", "10", "110", "0.00+?"]  # gpt-old: no price
    assert rows["total"][:5] == ["3", "1,600", "400", "260", "1,860"]
    assert "+? leaves out models that usage.prices does not list." in out
    assert "Budget global_daily today (" in out and "1,200 of 100,000 tokens" in out
    assert "0.00 of 1.00 USD (most: console:ana)" in out

    code, out, err = await bothost(home, config, "usage", "--by", "model", "--json")
    assert code == 0, err
    data = json.loads(out)
    models = {r["key"]: r for r in data["rows"]}
    assert models["gpt-a"]["calls"] == 2 and models["gpt-a"]["cached"] == 400
    assert abs(models["gpt-a"]["cost"] - (0.0034 + 0.0015)) < 1e-9
    assert models["gpt-old"]["unpriced"] == 1


def usage_of_one_turn(home, tmp_path):
    """`bothost usage ARGS` as a function, over one turn recorded three days ago."""
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    seed(home, [(time.time() - 3 * 86400, "turn", "slack:U1", "gpt-a", 100, 10, 0)])
    runner = CliRunner()
    return lambda *args: runner.invoke(cli, ["--config", str(config), "usage", *args])


def test_since_takes_today_a_date_or_a_duration(home, tmp_path):
    run = usage_of_one_turn(home, tmp_path)
    assert "No model calls recorded." in run("--since", "today").stdout
    assert "slack:U1" in run("--by", "user", "--since", "7d").stdout
    assert "slack:U1" in run("--by", "user", "--since", "2000-01-01").stdout
    bad = run("--since", "last tuesday")
    assert bad.exit_code == 2 and "expected 'today', a UTC date" in bad.stderr


def test_since_out_of_range_is_a_usage_error_naming_the_limit(home, tmp_path):
    """`--since 100000000d` printed "since -271764-03-22" and a date far ahead a report of
    nothing: a start before 1970-01-01 or after now is refused, exit 2, saying which."""
    run = usage_of_one_turn(home, tmp_path)
    for since in ("100000000d", "1000000d", "99999999999999999999d", "1969-12-31", "0001-01-01"):
        bad = run("--since", since)
        assert bad.exit_code == 2, (since, bad.stdout)
        assert "before 1970-01-01" in bad.stderr and "--since" in bad.stderr, bad.stderr
    ahead = run("--since", "9999-12-31")
    assert ahead.exit_code == 2 and "is after now" in ahead.stderr, ahead.stderr
    assert "slack:U1" in run("--by", "user", "--since", "1970-01-01").stdout
