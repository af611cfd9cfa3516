"""The tick: take the lease, claim pending events, triage, record, deliver, settle.

``run_tick`` is one tick with explicit dependencies (store, ``tick`` config, a ``deliver``
callable, an optional LLM triage, a clock); ``Ticker`` runs it on the timetable of
:mod:`bothost.events.schedule` as a long-lived coroutine the host supervises, and soon after
``poke()`` (the queue pokes on an urgent event). The host's ticker is assembled from its
parts in one place, :func:`bothost.host.wiring.build_ticker`. The order of steps is what makes the
guarantee hold: the briefing and its deliveries are recorded before anything is sent, and
events become ``done`` only once a delivery of their briefing is recorded (see
:mod:`bothost.events.ledger`). The lease is the tick's claim on the events it read: a tick
that dies leaves them pending for the next holder.
A tick whose lease another runner took over (a clock jump, a long stall) finds out at its
next step — every decision and every send checks the lease in the store first — and ends
with status ``lost``, leaving the rest to the new holder (:mod:`bothost.crosshost.lease`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from bothost.config import TickConfig
from bothost.crosshost import lease
from bothost.events import ledger, triage_store
from bothost.events.delivery import Deliver, deliver_briefing
from bothost.events.faults import kill_point
from bothost.events.llm_triage import LlmTriage, TriageFailedError, fallback_footer
from bothost.events.render import build_briefing
from bothost.events.schedule import Schedule
from bothost.events.triage import (
    MUTED,
    QueuedEvent,
    Triage,
    check_rules,
    group,
    low_summary,
    triage_offline,
)
from bothost.llm.base import BudgetSpentError
from bothost.models import Briefing
from bothost.usage import attribution

logger = logging.getLogger(__name__)

MAX_EVENTS_PER_TICK = 50_000  # bounds one tick's memory; the rest waits for the next tick
LLM_MAX_EVENTS = 200  # per tick for the model; a flood beyond that is grouped by the rules
RENEWALS_PER_LEASE = 3  # renew well before expiry even if one renewal is slow
RETRY_AFTER = 30.0  # seconds before trying again after a busy or failed tick
POKE_DELAY = 2.0  # after an urgent event, wait this long so a burst lands in one briefing
MAX_WAIT = 3600.0  # re-read the timetable at least hourly (the clock may jump)
CLOCK_SLACK = 0.001  # timers fire a hair early; that still counts as due
Clock = Callable[[], float]


@dataclass
class TickResult:
    """What one tick did; ``status`` is ``ok``, ``busy`` (another tick holds the lease) or
    ``lost`` (another runner took the lease over mid-way and finishes the work)."""

    status: str
    tick_id: int | None = None
    briefings: list[Briefing] = field(default_factory=list)
    events: int = 0
    held: int = 0
    silenced: int = 0  # dropped or muted: done without being shown


async def run_tick(
    store: Any,
    config: TickConfig,
    deliver: Deliver,
    *,
    llm_triage: LlmTriage | Callable[..., Any] | None = None,
    clock: Clock = time.time,
    trigger: str = "manual",
    on_briefing: Callable[[Briefing], Any] | None = None,
) -> TickResult:
    """One tick now. Returns ``status="busy"`` at once if another tick holds the lease."""
    owner = lease.new_owner()
    now = clock()
    if not await store.run(lambda db: lease.acquire(db, lease.TICK_LOCK, owner, now, config.lease)):
        return TickResult("busy")
    kill_point("leased")

    async def renew() -> None:
        # one row: the claims hold as long as the lease does (bothost.events.ledger)
        if not await store.run(
            lambda db: lease.renew(db, lease.TICK_LOCK, owner, clock(), config.lease)
        ):
            raise lease.LeaseLostError("another runner took the tick lease over")

    try:
        tick_id = await store.run(lambda db: ledger.start_tick(db, trigger, now, owner))
    except lease.LeaseLostError:  # taken over already (a stall right after taking it)
        return TickResult("lost")
    kill_point("started")
    result = TickResult("ok", tick_id)
    # a slow model or platform must not let the lease lapse while this tick still works
    keeper = asyncio.create_task(_keep_alive(renew, config.lease / RENEWALS_PER_LEASE))
    try:
        with attribution.for_tick(tick_id):  # the tick agent's model calls are this tick's
            await _tick(
                store,
                config,
                deliver,
                llm_triage,
                clock,
                on_briefing,
                renew,
                owner,
                result,
                trigger,
            )
    except lease.LeaseLostError as exc:
        # expected when clocks jump: the new holder re-claims our events and sends what we
        # had not; our claims and briefings are its to settle now
        logger.warning("tick %s stopped: %s", tick_id, exc)
        result.status, reason = "lost", str(exc)
        await store.run(
            lambda db: ledger.end_tick(
                db, tick_id, clock(), "lost", result.events, len(result.briefings), reason
            )
        )
    except BaseException as exc:
        if isinstance(exc, Exception):
            logger.exception("tick %s failed", tick_id)
        # its events are still pending (the lease was the claim) and go to the next tick
        error = repr(exc)
        await store.run(
            lambda db: ledger.end_tick(
                db, tick_id, clock(), "error", result.events, len(result.briefings), error
            )
        )
        raise
    else:
        await store.run(
            lambda db: ledger.end_tick(
                db, tick_id, clock(), "ok", result.events, len(result.briefings)
            )
        )
        kill_point("ended")
    finally:
        keeper.cancel()
        await store.run(lambda db: lease.release(db, lease.TICK_LOCK, owner))
    return result


async def _keep_alive(renew: Callable[[], Awaitable[None]], period: float) -> None:
    # the period is monotonic time (asyncio's clock): a wall clock jump neither hurries
    # nor delays a renewal
    while True:
        await asyncio.sleep(period)
        try:
            await renew()
        except lease.LeaseLostError:
            return  # the tick's next step finds out too, and stops
        except Exception:  # a failed renewal is retried next period; the tick goes on
            logger.exception("renewing the tick lease failed")


async def _tick(
    store: Any,
    config: TickConfig,
    deliver: Deliver,
    llm: Callable[..., Any] | None,
    clock: Clock,
    on_briefing: Callable[[Briefing], Any] | None,
    renew: Callable[[], Awaitable[None]],
    owner: str,
    result: TickResult,
    trigger: str = "manual",
) -> None:
    schedule = Schedule(config)
    now = clock()
    claim = await store.run(lambda db: ledger.claim(db, now, MAX_EVENTS_PER_TICK, owner))
    kill_point("claimed")
    quiet = schedule.is_quiet(now)
    result.events = len(claim.fresh) + sum(len(v) for v in claim.retries.values())

    unanswered: dict[str, str] = {}  # targets that let a deadline pass in this tick

    async def send(briefing: Briefing, shown: dict[int, str | None] | None = None) -> None:
        await _observe(on_briefing, briefing)
        await deliver_briefing(
            store,
            briefing,
            deliver,
            clock=clock,
            max_attempts=config.max_attempts,
            renew=renew,
            owner=owner,
            unanswered=unanswered,
            shown=shown,
        )
        result.briefings.append(briefing)

    for briefing_id, event_ids in claim.retries.items():
        briefing = await store.run(lambda db, b=briefing_id: ledger.load_briefing(db, b))
        if quiet and not any(item.priority == "urgent" for item in briefing.items):
            result.held += len(event_ids)  # they stay pending, as they are
            continue
        await send(briefing)

    if not claim.fresh:
        return
    decision = await decide(store, config, claim.fresh, llm, now, trigger)
    triage, briefing, silenced = decision.triage, decision.briefing, decision.silenced
    tick_id = result.tick_id
    assert tick_id is not None, "run_tick starts the tick before _tick runs"
    await store.run(
        lambda db: ledger.record(
            db,
            tick_id=tick_id,
            priorities=triage.priorities,
            done=silenced,
            briefing=briefing,
            now=now,
            owner=owner,
        )
    )
    kill_point("recorded")
    result.held += len(decision.held) + (len(decision.low) if briefing is None else 0)
    result.silenced = len(silenced)
    if briefing is not None:
        done = set(silenced)
        await send(
            briefing,
            {i: triage.priorities.get(i) for i in briefing.event_ids if i not in done},
        )


@dataclass
class Decision:
    """What a tick makes of its fresh events, before anything is written or sent."""

    triage: Triage
    briefing: Briefing | None  # None: nothing worth posting
    held: list[int]  # quiet hours keep them pending
    low: list[int]  # folded into the briefing's low line, or left pending for a later one
    silenced: list[int]  # dropped or muted: done without being shown


async def decide(
    store: Any,
    config: TickConfig,
    events: list[QueuedEvent],
    llm: Callable[..., Any] | None,
    now: float,
    trigger: str = "manual",
) -> Decision:
    """Triage ``events`` as a tick at ``now`` would and build the briefing it would post.

    It only reads the store (mutes, stored rules), so the tick and ``bothost tick
    --dry-run`` (:mod:`bothost.events.replay`) share it and cannot disagree."""
    schedule = Schedule(config)
    quiet = schedule.is_quiet(now)
    mutes = await store.run(lambda db: ledger.load_mutes(db, now))
    # read each tick: a rule taught in chat or by `triage add` applies from the next one
    rules = await store.run(lambda db: triage_store.rulebook(db, config))
    triage = triage_offline(events, rules, mutes, schedule.tz, now)
    if llm is not None and not quiet:
        # at night only urgent items go out, and the rules decide what is urgent: the
        # model would otherwise re-read every held event at every tick until morning
        triage = await _llm_triage(llm, events, triage, schedule)
    held = triage.ids("high", "normal", "low") if quiet else []
    items = [i for i in triage.items if not quiet or i.priority == "urgent"]
    low = [] if quiet else triage.ids("low")
    silenced = triage.ids("drop", MUTED)
    briefing = None
    # low events alone are not worth a message: they wait, pending with their priority,
    # for the next briefing's folded line or the digest
    if items or (low and trigger == "digest"):
        briefing = build_briefing(
            items,
            low_ids=low,
            muted_ids=triage.ids(MUTED),
            muted_summary=triage.muted_summary,
            low_summary=triage.low_summary,
            targets=config.deliver_to,
            now=now,
            tz=schedule.tz,
            footer=triage.note,
        )
    return Decision(triage, briefing, held, low, silenced)


async def _llm_triage(
    llm: Callable[..., Any], events: list[QueuedEvent], offline: Triage, schedule: Schedule
) -> Triage:
    """The model's triage of what rules and mutes left; offline triage if the model fails."""
    priorities = {i: p for i, p in offline.priorities.items() if p in ("drop", MUTED)}
    candidates = [e for e in events if e.id not in priorities]
    if not candidates:
        return offline
    for_model, rest = candidates[:LLM_MAX_EVENTS], candidates[LLM_MAX_EVENTS:]
    try:
        items, decided = await llm(for_model, schedule.tz)
    except BudgetSpentError as exc:  # expected: the rules decide today, and the briefing says so
        logger.info("tick agent not asked: %s", exc)
        return dataclasses.replace(offline, note=exc.footer)
    except TriageFailedError as exc:  # expected too: providers fail and models misbehave
        logger.warning("tick agent gave no triage, using the rules: %s", exc)
        return dataclasses.replace(offline, note=exc.footer)
    except Exception:  # a bug must not stop briefings either: fall back to the rules
        logger.exception("LLM triage failed; using offline rules for this tick")
        return dataclasses.replace(offline, note=fallback_footer("the tick agent failed"))
    priorities.update(decided)
    priorities.update({e.id: offline.priorities[e.id] for e in rest})
    return Triage(
        priorities,
        items + group(rest, priorities, schedule.tz),
        offline.muted_summary,
        low_summary=low_summary(events, priorities),
    )


async def _observe(on_briefing: Callable[[Briefing], Any] | None, briefing: Briefing) -> None:
    if on_briefing is None:
        return
    try:
        outcome = on_briefing(briefing)
        if inspect.isawaitable(outcome):
            await outcome
    except Exception:
        logger.exception("on_briefing observer failed")


class Ticker:
    """Runs ticks on the interval, the cron schedules, and soon after ``poke()``."""

    def __init__(
        self,
        store: Any,
        config: TickConfig,
        deliver: Deliver,
        *,
        llm_triage: LlmTriage | Callable[..., Any] | None = None,
        clock: Clock = time.time,
        on_briefing: Callable[[Briefing], Any] | None = None,
        poke_delay: float = POKE_DELAY,
        leading: Callable[[], bool] | None = None,
    ) -> None:
        self.store, self.config, self.deliver = store, config, deliver
        self.llm_triage, self.clock, self.on_briefing = llm_triage, clock, on_briefing
        self.poke_delay = poke_delay
        # whether this host leads (bothost.crosshost.leadership): only the leader ticks on the
        # timetable; an urgent event still gets its tick on whichever host it arrived at
        self.leading = leading or (lambda: True)
        self.schedule = Schedule(config)  # fail fast on a bad zone, cron or quiet hours
        check_rules(config.rules)
        self._poked = asyncio.Event()
        self._urgent = False
        self.results: list[TickResult] = []  # recent results, for status pages and tests

    def poke(self) -> None:
        """Ask for a tick soon (an urgent event arrived). Call from the event loop."""
        self._urgent = True
        self._poked.set()

    def wake(self) -> None:
        """Look at the timetable again now (this host just became the leader)."""
        self._poked.set()

    def reconfigure(self, config: TickConfig, llm_triage: LlmTriage | None) -> None:
        """Tick by ``config`` and ``llm_triage`` from now on (a config edit the host applied):
        checked as at start, then the timetable is looked at again."""
        schedule = Schedule(config)
        check_rules(config.rules)
        self.config, self.schedule, self.llm_triage = config, schedule, llm_triage
        self.wake()

    async def tick(self, trigger: str = "manual") -> TickResult:
        result = await run_tick(
            self.store,
            self.config,
            self.deliver,
            llm_triage=self.llm_triage,
            clock=self.clock,
            trigger=trigger,
            on_briefing=self.on_briefing,
        )
        self.results = (self.results + [result])[-20:]
        return result

    async def run_forever(self) -> None:
        """Tick on schedule until cancelled; returns at once if ``tick.enabled`` is false."""
        if not self.config.enabled:
            logger.info("tick disabled (tick.enabled: false)")
            return
        started = self.clock()
        cron_after, not_before = started, 0.0
        while True:
            if not self.leading():  # a follower ticks only for an urgent event
                if await self._wait(MAX_WAIT):
                    await asyncio.sleep(self.poke_delay)
                    await self._run_tick("urgent")
                continue
            last = await self.store.run(ledger.last_tick_started) or started
            now = self.clock()
            # a last tick (or cron moment) later than now means the clock was set back:
            # the timetable follows the clock as it is, or nothing would tick until the
            # clock caught up with its old reading (hours, after a VM restore)
            last, cron_after = min(last, now), min(cron_after, now)
            due, trigger = self.schedule.next_due(now, last, cron_after)
            due = max(due, not_before)
            if await self._wait(due - self.clock()):
                trigger = "urgent"
                await asyncio.sleep(self.poke_delay)
            elif self.clock() < due - CLOCK_SLACK or not self.leading():
                continue  # woke early (long waits are capped, a leader change): look again
            elif trigger in ("schedule", "digest"):
                cron_after = due
            retry = await self._run_tick(trigger)
            # the timetable says "overdue" until some tick succeeds: without a pause, a
            # held lease or a broken store would have us spin on it
            not_before = self.clock() + RETRY_AFTER if retry else 0.0

    async def _run_tick(self, trigger: str) -> bool:
        """One tick of the loop; True when it should be tried again soon (busy, lost or
        failed)."""
        try:
            return (await self.tick(trigger)).status in ("busy", "lost")
        except Exception:  # a scheduled run fails alone; the next one still comes
            logger.exception("scheduled tick failed")
            return True

    async def _wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds`` or until poked or woken; True if poked (urgent)."""
        if not self._poked.is_set() and seconds > 0:
            try:
                async with asyncio.timeout(min(seconds, MAX_WAIT)):
                    await self._poked.wait()
            except TimeoutError:
                return False
        urgent = self._urgent
        self._poked.clear()
        self._urgent = False
        return urgent
