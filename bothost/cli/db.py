"""``bothost db``: the database itself (``migrate``)."""

from __future__ import annotations

import json

import click

from bothost.cli.runtime import Runtime


@click.group("db")
def db_group() -> None:
    """The database (store.url): migrate it."""


@db_group.command("migrate")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def migrate(runtime: Runtime, as_json: bool) -> None:
    """Apply the migrations the database lacks, then exit (``run`` does it on start too)."""
    store = runtime.store  # opening applies them, under an advisory lock on PostgreSQL
    if as_json:
        click.echo(json.dumps({"database": store.label, "applied": store.applied}))
    elif store.applied:
        click.echo(f"{store.label}: applied {', '.join(store.applied)}")
    else:
        click.echo(f"{store.label}: up to date")
