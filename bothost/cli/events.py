"""The ``events``, ``tick`` and ``briefings`` commands: thin wrappers over bothost.events.

Each parses its arguments and calls one function of :mod:`bothost.events`. ``bothost tick``
prints every briefing it made on standard output (that printing *is* the delivery to a
``console:`` target); other targets go through the host's platforms, and a failure there is
reported on standard error and retried by the next tick.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from datetime import datetime
from typing import TextIO

import click

from bothost import jsondecode
from bothost.api import MAX_EVENT_TYPE
from bothost.cli.runtime import COUNT, Runtime, Seconds
from bothost.events import feedback
from bothost.events.delivery import to_console
from bothost.events.push import CLI_PATIENCE
from bothost.events.replay import ReplayInputError, read_events, report
from bothost.events.tick import TickResult

pass_runtime = click.make_pass_decorator(Runtime)
STATUSES = ("pending", "claimed", "done", "failed", "snoozed")
PRIORITIES = ("urgent", "high", "normal", "low", "drop")
BUSY_EXIT = 1
USAGE_EXIT = 2  # an argument no state could make work (click's own usage errors say 2 too)
REFUSED_EXIT = 1  # an event that must change to be queued (a duplicate is not a failure)
MAX_WAIT = 86400.0  # a day: longer (1e300, inf) is a command that never ends, not patience


def when(epoch: float | None) -> str:
    return datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M") if epoch else "-"


@click.group("events", short_help="The event queue: list, push, retry.")
def events_group() -> None:
    """The event queue: what servers, webhooks and people pushed for the tick."""


@events_group.command("list")
@click.option("--status", type=click.Choice(STATUSES), help="Only events in this state.")
@click.option(
    "--priority",
    type=click.Choice(PRIORITIES),
    help="Only events the tick gave this priority (low: what briefings fold into one line).",
)
@click.option(
    "--limit", type=COUNT, default=feedback.LIST_LIMIT, show_default=True, help="At most this many."
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_runtime
def list_events(
    runtime: Runtime, status: str | None, priority: str | None, limit: int, as_json: bool
) -> None:
    """List events, newest first (every status unless --status)."""
    rows = runtime.stored.call(lambda db: feedback.list_events(db, status, limit, priority))
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        which = " ".join(w for w in (status, priority) if w)
        click.echo(f"No {which} events." if which else "No events.")
    for row in rows:
        summary = row["payload"].get("summary") or row["payload"].get("subject") or ""
        line = (
            f"{row['id']:>6}  {when(row['received_at'])}  {row['status']:<8} "
            f"{row['priority'] or '-':<7} {row['source']}/{row['type']}  {summary}"
        )
        click.echo(line.rstrip()[:200])
        if row["status"] == "failed" and row["last_error"]:
            click.echo(f"{'':8}after {row['attempts']} attempts: {row['last_error']}")


@events_group.command("push")
@click.argument("source")
@click.argument("type")
@click.argument("payload", required=False, default="{}")
@click.option(
    "--wait",
    type=Seconds(zero=True, most=MAX_WAIT),
    default=CLI_PATIENCE,
    show_default=True,
    help=f"Seconds to keep trying while the database cannot take the event (0 to {MAX_WAIT:g}).",
)
@pass_runtime
def push(runtime: Runtime, source: str, type: str, payload: str, wait: float) -> None:
    """Queue an event by hand: bothost events push gmail event/new_email '{"id": "1"}'.

    Says why an event was not queued (a duplicate, a plugin, its size); a database that
    cannot write is tried again for --wait seconds, then named with exit status 1."""
    try:  # bytes that are not UTF-8 arrive as lone surrogates (surrogateescape)
        for hint, text, example in (("SOURCE", source, "gmail"), ("TYPE", type, "event/new_email")):
            jsondecode.check_text(text, hint)
            if not text.strip():  # it was queued, and no trigger, rule or listing could name it
                raise jsondecode.JsonInputError(f"it is empty; give one, e.g. {example}")
            if text != text.strip():  # " gmail" would silently miss every rule for gmail
                raise jsondecode.JsonInputError("it starts or ends with white space")
            if hint == "TYPE" and len(text) > MAX_EVENT_TYPE:  # the queue's bound, said first
                raise jsondecode.JsonInputError(
                    f"it is {len(text):,} characters; a type is at most {MAX_EVENT_TYPE} characters"
                )
        hint = "PAYLOAD"
        data = jsondecode.decode_object(payload)
    except jsondecode.JsonInputError as exc:  # one line, as `mcp call` says its ARGUMENTS'
        click.echo(f"bothost: Invalid value for {hint}: {exc}", err=True)
        sys.exit(USAGE_EXIT)
    pushed = runtime.run(runtime.push_event(source, type, data, wait))
    if pushed.event_id is not None:
        click.echo(f"Queued event {pushed.event_id}.")
        return
    click.echo(f"Not queued: {pushed.why_not}.", err=True)
    if pushed.refused:
        sys.exit(REFUSED_EXIT)


@events_group.command("retry")
@click.argument("ids", nargs=-1, type=int, required=True, metavar="ID...")
@pass_runtime
def retry(runtime: Runtime, ids: tuple[int, ...]) -> None:
    """Put failed events back in the queue for the next tick.

    \b
    Example:
      bothost events list --status failed
      bothost events retry 12 13
    """
    found = runtime.store.call(lambda db: feedback.statuses(db, list(ids)))
    changed = runtime.store.call(lambda db: feedback.retry_failed(db, list(ids)))
    # why each id was left alone: a mistyped id reads unlike an event that is not failed
    why = [
        f"event {i} is {found[i]}" if i in found else f"no event {i}"
        for i in dict.fromkeys(ids)
        if found.get(i) != "failed"
    ]
    left = f" {'; '.join(why)} (only failed events can be retried)" if why else ""
    click.echo(f"{changed} of {len(ids)} events back to pending.{left}")
    if not changed:
        sys.exit(1)


async def tick_once(runtime: Runtime, console: TextIO | None = None) -> TickResult:
    """One tick; a ``console:`` delivery prints on ``console`` (default: standard output)
    and is recorded only after that text is written and flushed."""
    from bothost.host.wiring import tick_once as host_tick_once

    # the console platform prints on standard output, and this process prints nothing else
    # while it ticks, so sending that stream elsewhere cannot catch anyone else's text
    with contextlib.redirect_stdout(console) if console else contextlib.nullcontext():
        return await host_tick_once(runtime.host(), "cli")


@click.command("tick")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the briefing a tick would post now, writing and sending nothing.",
)
@click.option(
    "--events",
    "events_file",
    type=click.Path(exists=True, dir_okay=False, allow_dash=True),
    help="With --dry-run: judge these events (JSON Lines, - for stdin), not the pending queue.",
)
@click.option(
    "--now",
    "at",
    metavar="ISO8601",
    help="With --dry-run: judge at this moment (with its UTC offset); default now.",
)
@click.option(
    "--digest",
    is_flag=True,
    help="With --dry-run: judge as the tick.digest tick (low events alone are posted).",
)
@pass_runtime
def tick_command(
    runtime: Runtime,
    as_json: bool,
    dry_run: bool,
    events_file: str | None,
    at: str | None,
    digest: bool,
) -> None:
    """Run one tick now and print the briefings it made.

    With --dry-run, triage the pending queue (or --events FILE) exactly as a tick would
    now and print the briefing it would post; nothing is written, claimed or sent.

    \b
    Example:
      bothost events push test ping '{"note": "hello"}'
      bothost tick
      bothost tick --dry-run --events corpus.jsonl --json
    """
    if dry_run:
        replay_command(runtime, as_json, events_file, at, digest)
        return
    if events_file is not None or at is not None or digest:
        raise click.UsageError("--events, --now and --digest go with --dry-run")
    # with --json, standard output holds the JSON document, so console: goes to stderr
    result = runtime.run(tick_once(runtime, console=sys.stderr if as_json else None))
    if as_json:
        click.echo(
            json.dumps(
                {
                    "status": result.status,
                    "tick_id": result.tick_id,
                    "events": result.events,
                    "held": result.held,
                    "silenced": result.silenced,
                    "briefings": [
                        {"id": b.id, "text": b.text, "event_ids": b.event_ids}
                        for b in result.briefings
                    ],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    elif result.status == "busy":
        click.echo("Another tick is running (the host, or another `bothost tick`).", err=True)
    elif result.status == "lost":
        click.echo(
            "Another tick took this one's lease over (a clock jump, or a long stall); it"
            " delivers what this one had not.",
            err=True,
        )
    else:
        for briefing in result.briefings:
            if not to_console(briefing):  # those were printed as they were delivered
                click.echo(briefing.text + "\n")
        report_deliveries(runtime, result)
    if result.status in ("busy", "lost"):
        sys.exit(BUSY_EXIT)


def replay_command(
    runtime: Runtime, as_json: bool, events_file: str | None, at: str | None, digest: bool
) -> None:
    """``tick --dry-run``: see :mod:`bothost.host.dryrun`."""
    from bothost.host.dryrun import dry_run

    now = moment(at) if at is not None else time.time()
    events = None
    if events_file is not None:
        try:
            with click.open_file(events_file, encoding="utf-8") as lines:
                events = read_events(lines, now)
        except UnicodeDecodeError as exc:
            raise click.BadParameter(f"not UTF-8 ({exc})", param_hint="--events") from None
        except ReplayInputError as exc:
            raise click.BadParameter(str(exc), param_hint="--events") from None
    judged, decision = runtime.run(
        dry_run(runtime.host(), events, now, "digest" if digest else "manual")
    )
    if as_json:
        found = report(judged, decision, with_ids=events is None)
        click.echo(json.dumps(found, indent=2, ensure_ascii=False))
    elif decision is not None and decision.briefing is not None:
        click.echo(decision.briefing.text)
    else:
        low = len(decision.low) if decision else 0
        click.echo(
            f"No briefing would be posted: {len(judged)} events, {low} of them low"
            " (they wait for the next briefing's line or the digest).",
            err=True,
        )


def moment(text: str) -> float:
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise click.BadParameter(
            f"expected ISO 8601 such as 2026-12-06T18:11:00+01:00, got {text!r}",
            param_hint="--now",
        ) from None
    if parsed.tzinfo is None:
        raise click.BadParameter(f"{text!r} needs its UTC offset (Z or +01:00)", param_hint="--now")
    return parsed.timestamp()


def report_deliveries(runtime: Runtime, result: TickResult) -> None:
    ids = {b.id for b in result.briefings}
    listed = runtime.store.call(lambda db: feedback.list_briefings(db, limit=len(ids) + 50))
    for entry in listed:
        for d in entry["deliveries"] if entry["id"] in ids else []:
            if d["status"] != "delivered":
                click.echo(
                    f"briefing {entry['id']} → {d['target']}: {d['status']} after "
                    f"{d['attempts']} attempts ({d['last_error']})",
                    err=True,
                )
    if not result.briefings:
        click.echo(
            f"No briefing: {result.events} events looked at, {result.held} held "
            f"(quiet hours), {result.silenced} dropped or muted.",
            err=True,
        )


@click.command("briefings")
@click.option("--limit", type=COUNT, default=20, show_default=True, help="At most this many.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_runtime
def briefings_command(runtime: Runtime, limit: int, as_json: bool) -> None:
    """List recent briefings, their text and where each was delivered."""
    rows = runtime.stored.call(lambda db: feedback.list_briefings(db, limit))
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        click.echo("No briefings yet.")
    for row in rows:
        targets = ", ".join(
            f"{d['target']} {d['status']}"
            + (f" ({d['last_error']})" if d["last_error"] and d["status"] != "delivered" else "")
            for d in row["deliveries"]
        )
        click.echo(
            f"#{row['id']}  {when(row['created_at'])}  {row['status']}  "
            f"{row['event_count']} events  → {targets or 'no targets'}"
        )
        click.echo("    " + row["text"].replace("\n", "\n    ") + "\n")
