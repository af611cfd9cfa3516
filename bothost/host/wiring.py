"""Connecting the host to its subsystems: the event queue, tick and scheduled jobs, and MCP.

Kept apart from :mod:`bothost.host.host` so the host reads as the flow of a message, and each
subsystem's construction (which needs several parts of the host) lives in one place. The
tick in particular is assembled only here (:func:`build_ticker`), from explicit parts: the
store, the ``tick`` config, ``deliver``, the ``on_briefing`` hooks and, with a model
configured, the tick agent's triage; :func:`tick_once` is the one way to run a tick outside
the schedule (``bothost tick``, the ``tick_now`` tool).
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any

from bothost.agent import unmatched
from bothost.agent.mcp_tools import McpToolSource
from bothost.agent.sampling import sampler
from bothost.crosshost.leadership import Leadership
from bothost.events.llm_triage import LlmTriage
from bothost.events.queue import EventQueue
from bothost.events.tick import Ticker, TickResult
from bothost.events.tick_agent import run_tick_agent
from bothost.hooks.call import call_each
from bothost.mcp.manager import McpManager
from bothost.models import Briefing
from bothost.rules import store as rule_store
from bothost.schedules.check import run_check
from bothost.schedules.runner import Scheduler

if TYPE_CHECKING:
    from bothost.host.host import Host

logger = logging.getLogger(__name__)

OFFLINE = ("", "offline")  # llm.provider values that mean "no model": the rules triage
# seconds start-up waits for the MCP servers before checking the rules' names: one that
# starts normally is ready well within it; one not ready by then is not judged
RULE_CHECK_WAIT = 60.0


async def start_events(host: Host, tick: bool = True) -> EventQueue:
    queue = EventQueue(host.store, host.config.tick)
    if tick and host.config.tick.enabled:
        host.ticker = build_ticker(host)
        queue.on_urgent = host.ticker.poke
        host.supervise("tick", host.ticker.run_forever)
    if tick:
        start_schedules(host)
    return queue


def start_schedules(host: Host) -> Scheduler:
    """The scheduler of people's jobs, beside the ticker under the host's supervisor: it
    fires while this host leads, and looks again at once when it becomes the leader."""
    checks = None
    if host.config.llm.provider not in OFFLINE:
        checks = functools.partial(run_check, host)

    def leading() -> bool:
        return host.leadership is None or host.leadership.leading

    scheduler = Scheduler(
        host.store,
        host.deliver,
        checks,
        host.config.schedules,
        lease_ttl=host.config.tick.lease,
        leading=leading,
    )
    if host.leadership is not None:

        async def changed(leading: bool) -> None:
            if leading:
                scheduler.wake()

        host.leadership.listen(changed)
    host.supervise("schedules", scheduler.run_forever)
    return scheduler


def build_ticker(host: Host) -> Ticker:
    """The host's ticker."""
    llm_triage = tick_triage(host)

    async def on_briefing(briefing: Briefing) -> None:
        await call_each(host.pm, "on_briefing", briefing=briefing)

    def leading() -> bool:
        return host.leadership is None or host.leadership.leading

    return Ticker(
        host.store,
        host.config.tick,
        host.deliver,
        llm_triage=llm_triage,
        on_briefing=on_briefing,
        leading=leading,
    )


def tick_triage(host: Host) -> LlmTriage | None:
    """The tick agent's triage when a model is configured; None: the rules triage alone."""
    if host.config.llm.provider in OFFLINE:
        return None
    return LlmTriage(functools.partial(run_tick_agent, host))


async def start_leadership(host: Host, leadership: Leadership) -> None:
    """Decide now whether this host leads (so its singleton servers start at once, or not
    at all), then keep deciding in the background; the MCP manager and the ticker follow."""

    async def changed(leading: bool) -> None:
        if host.mcp is not None:
            await host.mcp.leadership_changed(leading)
        if host.ticker is not None:
            host.ticker.wake()

    leadership.listen(changed)
    await leadership.check()
    host.supervise("leadership", leadership.run_forever)


async def tick_once(host: Host, trigger: str) -> TickResult:
    """One tick now: the running ticker's, or — in a process that runs none (``bothost
    tick``, ``bothost chat``) — one of its own, for which the platforms that can deliver
    without being started are bound, and stopped again afterwards."""
    if host.ticker is not None:
        return await host.ticker.tick(trigger)
    bound = bind_platforms(host)
    try:
        return await build_ticker(host).tick(trigger)
    finally:
        await unbind_platforms(bound)


def bind_platforms(host: Host) -> list[Any]:
    """Attach the platforms nobody started that can deliver without a connection of their
    own (web keeps briefings for its page; Slack posts with its token alone); those that
    attached, to be stopped after the tick."""
    bound = []
    for platform in host.platforms.values():
        bind = getattr(platform, "bind", None)  # optional: platforms that cannot bind lack it
        if callable(bind) and getattr(platform, "host", None) is None:
            bind(host)
            if getattr(platform, "host", None) is not None:
                bound.append(platform)
    return bound


async def unbind_platforms(bound: list[Any]) -> None:
    """Stop what :func:`bind_platforms` attached: a process that only ticks must close what
    they opened to deliver (the webhook platform's HTTP client) before it exits."""
    for platform in bound:
        try:
            await platform.stop()
        except Exception:  # one platform's cleanup must not hide the tick's result
            logger.exception("stopping the bound platform %s failed", platform.name)


async def start_mcp(host: Host, one_shot: bool = False, on_demand: bool = False) -> McpManager:
    """Start the MCP servers in the background: nothing waits for them at start (issue 14:
    one stuck server held the HTTP listener 15 s on every start; issue 19: ``bothost chat``
    waited for servers its turn never used). A turn waits for the ones it lists tools of
    (:meth:`McpManager.settle`). With ``on_demand`` (``bothost chat``) none starts now:
    each starts when a turn first needs its tools (activated, called, listed)."""
    # Only the long-running host publishes state/mcp-status.json (what `bothost mcp list`
    # shows in other processes); a one-shot host's servers must not overwrite it (issue 13).
    manager = McpManager(
        host.config.mcp.servers,
        host.store,
        host.home,
        on_events=host.take_events,
        ask=nobody_to_ask,
        publish_status=not one_shot,
        on_login_needed=host.tell_login_needed,
        leadership=host.leadership,
        on_demand=on_demand,  # servers start when a turn needs their tools
        sample=sampler(host),  # for servers with `sampling: true` only
    )
    await manager.start()
    host.registry.add_source(McpToolSource(manager, host.config))
    return manager


async def warn_unmatched_rules(host: Host) -> None:
    """Once the MCP servers have settled, log each permission rule (config or stored) that
    no tool known then matches (:mod:`bothost.agent.unmatched`): a deny written for a name
    an upgrade or a rename changed refuses nothing, and nothing else would say so."""
    manager = host.mcp_manager()
    await manager.settled(RULE_CHECK_WAIT)
    tools, ready = unmatched.registry_tools(host.registry)
    now = unmatched.known(tools, [s.name for s in manager.status()], ready)
    permissions = host.config.permissions
    rules, _ = await host.store.run(lambda db: rule_store.listing(db, permissions))
    for found in unmatched.unmatched(rules, now):
        logger.warning(
            "permission rules: %s; correct its tool or remove it (bothost rules list)",
            found.message,
        )


async def nobody_to_ask(question: Any) -> None:
    """A server's question that belongs to no conversation's tool call has nobody to answer.

    Questions asked during a tool call go to that conversation's platform (the call brings
    its own asker); this default only makes the client offer elicitation to servers.
    """
    return None
