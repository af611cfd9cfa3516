"""``bothost schedule …``: add, list and cancel scheduled jobs (reminders and checks).

Thin commands over :mod:`bothost.schedules`. A job added here is a row in the store; the
running host's scheduler sees it at its next poll (seconds), so nothing else is signalled.
From the command line the owner is the terminal's person, ``console:$USER`` (what a
permission rule names them by, so a ``--check`` runs with their permissions), the default
target ``console:`` (the host's standard output), and the operator sees and cancels every
job, as an admin does.
"""

from __future__ import annotations

import getpass
import json
import sys
import time

import click

from bothost.cli.runtime import Runtime
from bothost.schedules import (
    CHECK,
    MESSAGE,
    Job,
    ScheduleError,
    add_job,
    cancel_job,
    list_jobs,
    local_time,
    owner_zone,
    parse_duration,
    parse_when,
)

pass_runtime = click.make_pass_decorator(Runtime)


def operator() -> str:
    return f"console:{getpass.getuser()}"


def when_line(job: Job) -> str:
    if job.cron:
        nxt = f", next {local_time(job.next_run, job.tz)}" if job.next_run else ""
        return f"cron {job.cron!r} ({job.tz}){nxt}"
    return f"at {local_time(job.at or 0, job.tz)} ({job.tz})"


@click.group("schedule")
def schedule_group() -> None:
    """Reminders and checks that run at a time or on a cron."""


@schedule_group.command("add")
@click.option("--at", "at_text", metavar="ISO8601", help="Once, at this time (or 09:00, …).")
@click.option("--in", "in_text", metavar="DURATION", help="Once, this long from now (10m, 2h).")
@click.option("--cron", metavar="EXPR", help="Repeating: a cron in the owner's time zone.")
@click.option("--to", "target", default="console:", show_default=True, help="Where to post.")
@click.option("--check", is_flag=True, help="TEXT is a prompt; post only what the turn notifies.")
@click.argument("text", nargs=-1, required=True)
@pass_runtime
def add_command(
    runtime: Runtime,
    at_text: str | None,
    in_text: str | None,
    cron: str | None,
    target: str,
    check: bool,
    text: tuple[str, ...],
) -> None:
    """Add a job: post TEXT (or, with --check, run it as a prompt) at its time."""
    if sum(v is not None for v in (at_text, in_text, cron)) != 1:
        raise click.UsageError("give exactly one of --at, --in and --cron")
    tz = owner_zone(runtime.config)
    now = time.time()
    try:
        at = None
        if at_text is not None:
            at = parse_when(at_text, tz, now)
        elif in_text is not None:
            at = now + parse_duration(in_text)
        limits = runtime.config.schedules
        job = runtime.store.call(
            lambda db: add_job(
                db,
                operator(),
                target,
                CHECK if check else MESSAGE,
                " ".join(text),
                at=at,
                cron=cron,
                tz=tz,
                limits=limits,
                now=now,
            )
        )
    except ScheduleError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(f"Scheduled #{job.id}: {job.kind} {when_line(job)} to {job.target}.")


@schedule_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--all", "everything", is_flag=True, help="Done and cancelled jobs too.")
@pass_runtime
def list_command(runtime: Runtime, as_json: bool, everything: bool) -> None:
    """Every person's scheduled and failed jobs, oldest first."""
    found = runtime.stored.call(lambda db: list_jobs(db, everything=everything))
    if as_json:
        click.echo(json.dumps([j.as_dict() for j in found], indent=2, ensure_ascii=False))
        return
    if not found:
        click.echo("No scheduled jobs.")
        return
    for job in found:
        failed = f" — {job.last_error}" if job.status == "failed" and job.last_error else ""
        click.echo(
            f"#{job.id} {job.status} {job.kind} {when_line(job)} {job.owner} → {job.target}:"
            f" {job.text}{failed}"
        )


@schedule_group.command("cancel")
@click.argument("job_id", metavar="ID")
@pass_runtime
def cancel_command(runtime: Runtime, job_id: str) -> None:
    """Cancel a job by its id (#7 or 7)."""
    try:
        number = int(job_id.removeprefix("#"))
    except ValueError:
        raise click.BadParameter(f"expected a job id such as 7, got {job_id!r}") from None
    try:
        job = runtime.store.call(lambda db: cancel_job(db, number, operator(), admin=True))
    except ScheduleError as exc:
        click.echo(f"bothost: {exc}", err=True)
        sys.exit(1)
    click.echo(f"Cancelled #{job.id}: {job.text}")
