"""``bothost triage …``: list, add, remove, restore and test triage rules.

Thin commands over :mod:`bothost.events.triage_rules`. ``add``, ``remove`` and ``restore``
change the ``triage_rules`` table, which the tick reads at every tick, so a change applies
from the next one; rules in config (``tick.rules``) are changed in the config file.
"""

from __future__ import annotations

import getpass
import json
import sys
from collections.abc import Callable
from datetime import datetime
from typing import NoReturn, TypeVar

import click

from bothost import jsondecode
from bothost.cli.runtime import Runtime
from bothost.events import triage_rules, triage_store
from bothost.events.triage import PRIORITIES
from bothost.events.triage_store import TriageRuleError
from bothost.store.conn import Conn

T = TypeVar("T")
USAGE_EXIT = 2  # nothing was written, as for any usage error

pass_runtime = click.make_pass_decorator(Runtime)


def when(epoch: float | None) -> str:
    return datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M") if epoch else ""


def stored(runtime: Runtime, read: Callable[[Conn | None], T]) -> T:
    """``read`` on the store, or on None in a home not made yet (a fresh install): reading
    the defaults should not create a home and a database."""
    if not runtime.has_home():
        return read(None)
    return runtime.stored.call(read)


def fail(exc: TriageRuleError, status: int = 1) -> NoReturn:
    click.echo(f"bothost: {exc}", err=True)
    sys.exit(status)


@click.group("triage")
def triage_group() -> None:
    """Triage rules: what priority the tick gives an event."""


@triage_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_runtime
def list_command(runtime: Runtime, as_json: bool) -> None:
    """Every rule in the order the tick tries it; removed defaults marked."""
    tick = runtime.config.tick
    entries = stored(runtime, lambda db: triage_rules.listing(db, tick))
    if as_json:
        data = {
            "order": triage_rules.ORDER,
            "rules": [e.to_dict() for e in entries],
            "fallback": triage_rules.FALLBACK,
        }
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    click.echo(f"Triage rules, {triage_rules.ORDER}:")
    position = 0
    for entry in entries:
        if entry.removed:
            mark = f"   off  {entry.ref}  ({entry.why_off} {when(entry.added_at)})"
            click.echo(mark.replace(" )", ")"))
            continue
        position += 1
        by = f" — by {entry.added_by} {when(entry.added_at)}" if entry.added_by else ""
        note = f" — {entry.rule.note}" if entry.rule.note else ""
        click.echo(f"{position:>3}  {entry.ref}  {triage_rules.describe(entry.rule)}{note}{by}")
    click.echo(f"Then: {triage_rules.FALLBACK}.")


@triage_group.command("add")
@click.option(
    "--match",
    "match",
    multiple=True,
    required=True,
    metavar="KEY=GLOB",
    help="source, type or payload.FIELD and a glob (repeatable; all must fit).",
)
@click.option(
    "--priority",
    required=True,
    type=click.Choice(PRIORITIES, case_sensitive=False),
    help="What the rule makes a matching event (drop: never shown).",
)
@click.option("--note", default="", help="Why: shown in the listing and by triage test.")
@click.option(
    "--unless", multiple=True, metavar="KEY=GLOB", help="Not when this fits (repeatable)."
)
@click.option(
    "--within",
    multiple=True,
    metavar="KEY=DURATION",
    help="Only when this time field is from now to now plus DURATION (payload.start=24h).",
)
@pass_runtime
def add_command(
    runtime: Runtime,
    match: tuple[str, ...],
    priority: str,
    note: str,
    unless: tuple[str, ...],
    within: tuple[str, ...],
) -> None:
    """Add a rule: bothost triage add --match 'payload.from=*@corp.example' --priority high."""
    try:
        rule = triage_rules.rule_from_pairs(match, priority, note, unless, within)
    except TriageRuleError as exc:
        fail(exc, USAGE_EXIT)  # one line, as a config error reads
    by = f"cli:{getpass.getuser()}"
    rule_id = runtime.store.call(lambda db: triage_store.add(db, rule, "cli", by))
    click.echo(f"Added triage rule #{rule_id}: {triage_rules.describe(rule)}.")


@triage_group.command("remove")
@click.argument("ref", metavar="N|default:NAME")
@pass_runtime
def remove_command(runtime: Runtime, ref: str) -> None:
    """Remove stored rule N, or take out the shipped default default:NAME."""
    if ref.startswith("tick.rules["):
        raise click.UsageError(f"{ref} is in the config file: change it there")
    by = f"cli:{getpass.getuser()}"
    try:
        click.echo(runtime.store.call(lambda db: triage_store.remove(db, ref, "cli", by)))
    except TriageRuleError as exc:
        fail(exc)


@triage_group.command("restore")
@click.argument("ref", metavar="default:NAME")
@pass_runtime
def restore_command(runtime: Runtime, ref: str) -> None:
    """Put back a shipped default that was removed."""
    try:
        click.echo(runtime.store.call(lambda db: triage_store.restore(db, ref)))
    except TriageRuleError as exc:
        fail(exc)


@triage_group.command("test")
@click.argument("event", metavar="EVENT_JSON")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_runtime
def test_command(runtime: Runtime, event: str, as_json: bool) -> None:
    """Which rule decides an event, and why:
    bothost triage test '{"source": "gmail", "type": "event/new_email", "payload": {…}}'."""
    try:
        data = jsondecode.decode_object(event)
    except jsondecode.JsonInputError as exc:
        raise click.BadParameter(str(exc), param_hint="EVENT_JSON") from None
    tick = runtime.config.tick
    try:
        found = stored(runtime, lambda db: triage_rules.decide(db, tick, data))
    except TriageRuleError as exc:
        raise click.BadParameter(str(exc), param_hint="EVENT_JSON") from None
    if as_json:
        click.echo(json.dumps(found.to_dict(), indent=2, ensure_ascii=False))
    else:
        click.echo(found.line())
