"""Scheduled jobs in chat: the agent's ``schedule`` and ``schedules`` tools.

Both are plain functions of the :mod:`bothost.schedules` API, so chat makes, lists and
cancels jobs exactly as the command line does (the limits, the targets, the refusals' one
line). The job's owner is the person of the session (``slack:U0123``, ``web:NAME``), and the
zone their words are read in is their platform's (Slack's user ``tz``, asked through the
optional :class:`bothost.platform.Zoned`) or ``tick.timezone``. Each answer echoes the time
back in that zone, so a misread "at 9" is seen at once. A person sees and cancels only their
own jobs; an admin (the terminal, the local web chat, a platform's ``admins``) sees all.

A job posts into the conversation it was made in by default. Another target is a send to a
recipient the model chose, so such a call is ``egress: chosen`` (:func:`egress_of`, judged
per call by the turn): anyone may ask for it, the approvals ask the person (permission rules
and remembered answers apply) and the lethal-trifecta interlock refuses it, as for
``send_message``. The yes is for this post: the job fires later with no new check.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Literal

from bothost import identity
from bothost.agent.tools import ToolContext, ToolError
from bothost.hookspecs import RegisterTool
from bothost.models import Session
from bothost.platform import Zoned
from bothost.schedules import owner_zone
from bothost.schedules.errors import ScheduleError
from bothost.schedules.store import CHECK, Job, add_job, cancel_job, list_jobs
from bothost.schedules.when import local_time, parse_when

logger = logging.getLogger(__name__)

ZONE_TIMEOUT = 5.0  # seconds to ask the platform for a person's zone before using the default
LISTED = 50  # jobs one listing shows (schedules.max_per_person's default)


def elsewhere(target: str, session: Session) -> bool:
    """Whether a job for ``target`` (blank: here) posts outside ``session``'s conversation."""
    return bool(target.strip()) and target.strip() != str(session.address)


def egress_of(arguments: dict[str, Any], session: Session) -> str:
    """A ``schedule`` call's egress: ``chosen`` when its target is another conversation."""
    return "chosen" if elsewhere(str(arguments.get("target") or ""), session) else "none"


def owner_of(ctx: ToolContext) -> str:
    session = ctx.session
    return identity.person(session.address.platform, session.user or session.address.platform)


async def zone_of(ctx: ToolContext) -> str:
    """The person's zone: their platform's when it knows it, else the configured one."""
    platform = ctx.session.platform
    found = None
    if isinstance(platform, Zoned) and ctx.session.user:
        try:
            found = await platform.timezone(ctx.session.user)
        except Exception:  # a platform's lookup failing leaves the default zone
            logger.exception("asking %s for a person's time zone failed", platform)
    return owner_zone(ctx.host.config, found)


def when_text(job: Job, now: float) -> str:
    """``Tue 2026-12-08 09:00 Europe/Zurich``; a repeating job's cron and next moment."""
    if job.cron:
        nxt = f", next {local_time(job.next_run, job.tz, now)}" if job.next_run else ""
        return f"on cron {job.cron!r} ({job.tz}){nxt}"
    return f"for {local_time(job.at or 0, job.tz, now)} {job.tz}"


def job_line(job: Job, now: float, owner: bool = False) -> str:
    what = "check" if job.kind == CHECK else "reminder"
    failed = f" — failed: {job.last_error}" if job.status == "failed" and job.last_error else ""
    whose = f" by {job.owner}" if owner else ""
    return f"#{job.id} {what} {when_text(job, now)} → {job.target}{whose}: {job.text}{failed}"


async def schedule(
    ctx: ToolContext,
    when: str,
    text: str,
    kind: Literal["message", "check"] = "message",
    target: str = "",
    repeat: str = "",
) -> str:
    """Schedule a reminder (posts `text`) or a check (runs `text` as a prompt later, posting
    only what it notifies). Times are in the person's own zone.

    Args:
        when: 09:00, 9pm, in 10m, tomorrow 9:00 or ISO 8601; ignored with repeat.
        text: the reminder, or the check's prompt.
        kind: message or check.
        target: where to post (slack:C…, web:NAME, webhook:NAME, console:); default here.
        repeat: a five-field cron, e.g. "0 8 * * 1" for Mondays at 08:00.
    """
    here = str(ctx.session.address)
    target = target.strip() or here  # elsewhere, the turn had it approved (egress_of)
    owner, tz, now = owner_of(ctx), await zone_of(ctx), time.time()
    limits = ctx.host.config.schedules
    try:
        at = None if repeat.strip() else parse_when(when, tz, now)
        cron = repeat.strip() or None
        job = await ctx.host.store.run(
            lambda db: add_job(
                db, owner, target, kind, text, at=at, cron=cron, tz=tz, limits=limits, now=now
            )
        )
    except ScheduleError as exc:
        raise ToolError(str(exc)) from None
    return set_line(job, here, now)


def set_line(job: Job, here: str, now: float) -> str:
    """``Reminder set for Tue 2026-12-08 09:00 Europe/Zurich (job 3).``"""
    what = "Check" if job.kind == CHECK else "Reminder"
    where = "" if job.target == here else f" to {job.target}"
    return f"{what} set {when_text(job, now)}{where} (job {job.id})."


async def schedules(
    ctx: ToolContext, action: Literal["list", "cancel"] = "list", id: int = 0
) -> str:
    """List the person's scheduled reminders and checks, or cancel one by its id.

    Args:
        action: list or cancel.
        id: the job to cancel.
    """
    owner, admin, now = owner_of(ctx), ctx.session.is_admin, time.time()
    if action == "list":
        found = await ctx.host.store.run(lambda db: list_jobs(db, None if admin else owner))
        if not found:
            return "No scheduled jobs." if admin else "You have no scheduled jobs."
        lines = [job_line(j, now, owner=admin and j.owner != owner) for j in found[:LISTED]]
        more = len(found) - LISTED
        return "\n".join(lines + ([f"… and {more} more"] if more > 0 else []))
    if action != "cancel":
        raise ToolError(f"unknown action {action!r}; expected list or cancel")
    try:
        job = await ctx.host.store.run(lambda db: cancel_job(db, int(id), owner, admin=admin))
    except ScheduleError as exc:
        raise ToolError(str(exc).replace(" (bothost schedule list)", "")) from None
    return f"Cancelled job {job.id}: {job.text}"


def register_tools(register: RegisterTool) -> None:
    register(schedule, egress_of=egress_of)
    register(schedules)
