"""``bothost db``: the database itself (``migrate``, ``export``, ``import``)."""

from __future__ import annotations

import json

import click

from bothost.cli.runtime import Runtime
from bothost.store.dump import read_dump, write_dump


@click.group("db", short_help="Migrate the database, or export and import it.")
def db_group() -> None:
    """The database (store.url): migrate it, or move it to another with export and import."""


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


@db_group.command("export")
@click.argument("file")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary.")
@click.pass_obj
def export(runtime: Runtime, file: str, as_json: bool) -> None:
    """Write the whole database to FILE, for db import elsewhere.

    Every table of core and of the plugins, read in one snapshot, into a new file made 0600
    (it holds OAuth tokens and servers' credentials), or to a pipe with ``-``. Stop the hosts
    first, or events that arrive meanwhile stay behind. Then point store.url at the new
    database and run ``bothost db import FILE``.
    """
    store = runtime.store
    counts = write_dump(store, file)
    summary(store.label, "exported from", file, counts, as_json, err=file == "-")


@db_group.command("import")
@click.argument("file")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary.")
@click.pass_obj
def import_(runtime: Runtime, file: str, as_json: bool) -> None:
    """Copy a db export dump into the new, empty database store.url names.

    FILE, or ``-`` for standard input. The database must hold no row in any table and have
    the same migrations as the dump (it is migrated when opened). All or nothing, in one
    transaction; on PostgreSQL the identity counters continue past the imported ids, and a
    NUL in text is stored as U+FFFD, as a PostgreSQL host stores it (the count is shown).
    """
    store = runtime.store
    imported = read_dump(store, file)
    nuls = imported.nul_replaced
    summary(store.label, "imported into", file, imported.tables, as_json, err=False, nuls=nuls)


def summary(
    label: str,
    verb: str,
    file: str,
    counts: dict[str, int],
    as_json: bool,
    err: bool,
    nuls: int | None = None,
) -> None:
    """What moved: tables and row counts, never a row (they hold secrets); for an import,
    how many text values held a NUL that PostgreSQL stores as U+FFFD."""
    if as_json:
        data: dict[str, object] = {"database": label, "file": file, "tables": counts}
        if nuls is not None:
            data["nul_replaced"] = nuls
        click.echo(json.dumps(data), err=err)
        return
    click.echo(
        f"{sum(counts.values())} rows in {len(counts)} data tables {verb} {label}"
        + ("" if file == "-" else f" ({file})"),
        err=err,
    )
    if nuls:
        values = "1 text value" if nuls == 1 else f"{nuls} text values"
        click.echo(
            f"{values} held NUL, stored with U+FFFD as a PostgreSQL host stores them", err=err
        )
