"""The ``usage`` command: model usage by day, user or model, with cost and budgets."""

from __future__ import annotations

import json
import time

import click

from bothost.cli.runtime import Runtime
from bothost.usage import report, summary

pass_runtime = click.make_pass_decorator(Runtime)
DEFAULT_SINCE = "30d"


@click.command("usage", short_help="Model tokens, cost and today's budgets.")
@click.option(
    "--by",
    type=click.Choice(["day", "user", "model"]),
    default="day",
    show_default=True,
    help="One row per UTC day, person or model.",
)
@click.option(
    "--since",
    default=DEFAULT_SINCE,
    show_default=True,
    help="'today', a UTC date (2026-12-01) or a duration back from now (24h, 7d).",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_runtime
def usage_command(runtime: Runtime, by: str, since: str, as_json: bool) -> None:
    """Model usage: tokens (cached ones too), cost with usage.prices, today's budgets."""
    now = time.time()
    try:
        start = report.parse_since(since, now)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--since") from None
    config = runtime.config.usage
    result = runtime.stored.call(lambda db: summary.summarise(db, config, by, start, now))
    if as_json:
        click.echo(json.dumps(result.as_json(), indent=2))
    else:
        click.echo(summary.render(result))
