"""The host: owns the config, plugins, store, tools, platforms and long-running tasks.

It is built explicitly (no globals) from a loaded config, a home directory and a plugin
manager; :meth:`Host.start` runs the ``startup`` hooks, starts the enabled platforms, the
HTTP app, the MCP servers and the tick; :meth:`Host.stop` undoes it all. Every incoming
message goes through :meth:`handle_message` (platform → host → agent → reply) and every
pushed event through :attr:`intake` (producer → hooks → queue).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

from bothost import redact
from bothost.agent import fresh, history, prompt_command, prompt_completion, spill
from bothost.agent.admin import AdminToolSource
from bothost.agent.explain import explain
from bothost.agent.registry import Group, ToolRegistry
from bothost.agent.sessionlock import SessionBusyError, SessionLocks
from bothost.agent.stopper import TurnStopper
from bothost.agent.tools import Tool
from bothost.agent.turn import Turn, tool_budget
from bothost.agent.untrusted import ANSWER_LABEL, wrap_untrusted
from bothost.api import (
    STOPPED_TEXT,
    Outcome,
    Receipt,
    Reply,
    Starting,
    TextSink,
    TriageApplied,
    TriageProposal,
    is_stop,
)
from bothost.config import Config, McpServerConfig, secret_values
from bothost.config.home import ensure_home
from bothost.config.http import listens
from bothost.config.live import Apply, LiveSections
from bothost.crosshost import open_crosshost
from bothost.crosshost.leadership import Leadership
from bothost.crosshost.lease import new_owner
from bothost.events import triage_proposal
from bothost.events.delivery import platform_deliver
from bothost.events.intake import Dropped, Intake, Taken
from bothost.events.queue import MAX_PAYLOAD_BYTES
from bothost.events.triage_rules import who_can
from bothost.hooks.call import call_each
from bothost.hooks.startup import (
    OfflineEntry,
    Registered,
    build_migrations,
    collect_offline_commands,
    collect_tools,
)
from bothost.host.inbox import PRUNE_EVERY, Inbox, OnceIds
from bothost.host.reload import ReloadStatus
from bothost.host.supervisor import Supervisor
from bothost.mcp.commands import start_login
from bothost.mcp.manager import McpManagerError
from bothost.models import Address, Briefing, Event, IncomingMessage, Session
from bothost.platform import (
    Asking,
    Deferred,
    LoginNotice,
    Notifying,
    Platform,
    Question,
    Requiring,
    Serial,
    actual,
)
from bothost.queries import McpServerRow, Queries
from bothost.schedules import cancel_job, list_jobs
from bothost.store import Store
from bothost.store.corruption import OPEN_CHECK_SECONDS
from bothost.store.hostlock import HostLock, HostLockedError
from bothost.store.target import store_target
from bothost.usage.meter import Metered

if TYPE_CHECKING:
    from bothost.api import HostApi
    from bothost.events.tick import TickResult
    from bothost.http.server import HttpServer

logger = logging.getLogger(__name__)

NOTICE_TIMEOUT = 30.0  # seconds one platform gets to tell its admins (a DM each)


class HostError(Exception):
    """The host cannot start as configured; the message says what to fix."""


class Host:
    def __init__(
        self,
        config: Config,
        home: Path,
        pm: pluggy.PluginManager,
        registered: Registered | None = None,
        lock_wait: float | None = None,
        check_within: float = OPEN_CHECK_SECONDS,
    ) -> None:
        """``registered``: what the command line collected to check the config (the hooks
        are called once); a host built on its own collects it here. ``lock_wait``: seconds
        after which the store waits no more on another process's lock; ``check_within``:
        seconds the database file's pages may be checked for damage (see :class:`Store`)."""
        self.config = config
        self.config_file: str | None = None  # --config or BOTHOST_CONFIG: what reload reads
        self.reload_status = ReloadStatus()  # what the last look at the config file found
        self.live_sections = LiveSections()  # plugin config keys their plugins take live
        # the config's secrets, and which of them are credentials: hidden from every log and
        # from the model, however this host was built (the CLI has done it already: a no-op)
        redact.remember(redact.config_secrets(config) | secret_values(config))
        self.home = ensure_home(home)
        self.pm = pm
        self.store = Store(
            store_target(config.store.url, self.home),
            build_migrations(pm),
            lock_wait=lock_wait,
            check_within=check_within,
        )
        self.registry = ToolRegistry()
        collect_tools(pm, self.registry)
        self.registry.add_source(AdminToolSource())
        registered = registered or Registered.collect(pm)
        self.providers = registered.providers
        self.provider_name = self.check_provider()
        self._llm: Any = None  # built on first use: see llm
        self.platforms = registered.platforms
        self._deliver = platform_deliver(self.platforms)  # console: prints, others send_briefing
        self.active: dict[str, Any] = {}
        # the offline agent's extra commands (register_offline_commands); its own join them
        # when it is built
        self.offline_commands: dict[str, OfflineEntry] = collect_offline_commands(pm)
        self.supervisor = Supervisor()
        self.queries = Queries(
            self.store,
            mcp=lambda: self.mcp,
            platforms=lambda: self.active,
            connections=lambda: self.http.guard if self._http is not None else None,
            usage=self.config.usage,
            permissions=lambda: self.config.permissions,
            lookup=lambda name: self.registry.lookup(name),
            bounds=lambda: self.events.bounds if self.events is not None else None,
        )
        self.mcp: Any = None
        # by session id: the granted groups its replies last said were left out of requests
        # (bothost.agent.turn says a set once, not under every reply); kept in memory only
        self.told_left_out: dict[str, frozenset[str]] = {}
        self.events: Any = None
        self._intake: Intake | None = None
        self.ticker: Any = None
        self.leadership: Leadership | None = None  # `bothost run` only: see start()
        self.host_lock: HostLock | None = None  # a serving host's hold on its SQLite file
        self.turns: dict[Address, set[asyncio.Task[Reply]]] = {}  # running, per session
        self.session_locks = SessionLocks(self.store)  # one turn per session across hosts
        self.inbox = Inbox(self.queries)  # deliveries taken once; serial platforms' queues
        self.once_ids = OnceIds(self.queries)  # webhook ids: in-process front of the record
        self.windows = history.Windows()  # the sessions' recent messages, kept between turns
        self.crosshost = open_crosshost(self.store, new_owner())  # notices to the other hosts
        self.stopper = TurnStopper(self.crosshost, self.cancel)
        self.started = False
        self._http: HttpServer | None = None

    @property
    def http(self) -> HttpServer:
        """The HTTP listener, made on first use: aiohttp's import was a third of a one-shot
        command's start (issue 19), and ``bothost chat`` never listens."""
        if self._http is None:
            from bothost.http.server import HttpServer

            self._http = HttpServer(self)
        return self._http

    def check_provider(self) -> str:
        """The configured provider's name; HostError when no plugin registered it."""
        name = self.config.llm.provider or "offline"
        if name not in self.providers:
            raise HostError(
                f"llm.provider: unknown provider {name!r}; "
                f"known: {', '.join(sorted(self.providers))}"
            )
        return name

    @property
    def llm(self) -> Any:
        """The model, built on first use (a turn): a provider plugin may import a vendor
        SDK (seconds of CPU for some), which ``bothost doctor`` and every command that asks
        no model would pay when the host was built (issue 19)."""
        if self._llm is None:
            self._llm = self.make_provider()
        return self._llm

    def make_provider(self) -> Any:
        name = self.provider_name
        provider = self.providers[name](self.config.llm)
        commands = getattr(provider, "commands", None)
        if isinstance(commands, dict):  # the offline agent: its own and the plugins' commands
            for command, entry in commands.items():
                self.offline_commands[command] = entry
            provider.commands = self.offline_commands
        if getattr(provider, "free", False):  # the offline agent: no model, nothing to meter
            return provider
        return Metered(
            provider, self.store, self.config.usage, model=self.config.llm.model, name=name
        )

    # --- lifecycle --------------------------------------------------------------------------

    async def start(
        self,
        *,
        serve_http: bool = True,
        platforms: bool = True,
        mcp: bool = True,
        tick: bool = True,
        mcp_on_demand: bool = False,
    ) -> None:
        """Start what is asked for. ``mcp_on_demand`` (``bothost chat``): each MCP server
        starts when a turn first needs its tools, instead of all of them now."""
        from bothost.host.wiring import (
            start_events,
            start_leadership,
            start_mcp,
            warn_unmatched_rules,
        )

        if serve_http and self.store.path is not None:  # before anything leads or listens
            lock = HostLock(self.store.path)
            try:
                lock.acquire()
            except HostLockedError as exc:
                raise HostError(str(exc)) from None
            self.host_lock = lock
        await self.crosshost.start()  # listening before platforms subscribe and serve
        if serve_http:  # the long-running host takes part in leadership; commands do not
            self.leadership = Leadership(self.store, self.config.tick.lease)
        self.events = await start_events(self, tick=tick)
        if mcp:
            self.mcp = await start_mcp(self, one_shot=not serve_http, on_demand=mcp_on_demand)
        await call_each(self.pm, "startup", host=self)
        if platforms:
            for name, platform in self.platforms.items():
                if self.platform_enabled(name, platform):
                    await self.start_platform(name, platform)
        if serve_http and listens(self.config):
            await self.http.start()
        if self.leadership is not None:
            # last: the lease is renewed only once the host is up, and start-up's own work
            # (imports, platforms, the listener) can keep the loop from renewing for longer
            # than a lease on a loaded machine — another host then took the lease while this
            # one still ran the singleton servers it had started, both at once
            await start_leadership(self, self.leadership)
        self.started = True
        if serve_http and self.mcp is not None:  # the long-running host; a command says its own
            self.supervise("rule names", lambda: warn_unmatched_rules(self))
        if platforms and self.mcp is not None:
            self.supervise("login notices", self._tell_pending_logins)

    def platform(self, name: str) -> Platform | None:
        """The platform registered under ``name`` (started or not), or None; a
        :class:`~bothost.platform.Deferred` one is made now and is returned itself."""
        found = self.platforms.get(name)
        return actual(found) if found is not None else None

    @property
    def max_event_payload(self) -> int:
        return self.events.max_payload if self.events is not None else MAX_PAYLOAD_BYTES

    def platform_enabled(self, name: str, platform: Any) -> bool:
        if isinstance(platform, Deferred):  # made now: failing, it fails as its registration did
            try:
                platform.platform()
            except Exception as exc:
                raise HostError(f"platforms.{name}: the platform could not be made: {exc}") from exc
        try:
            return bool(platform.enabled(self))
        except Exception:
            logger.exception("platform %s failed to say whether it is enabled", name)
            return False

    async def start_platform(self, name: str, platform: Any) -> None:
        try:
            await platform.start(self)
        except Exception as exc:
            logger.exception("platform %s failed to start", name)
            if isinstance(platform, Requiring) and platform.required:
                raise HostError(f"platforms.{name}: failed to start: {exc}") from exc
            return
        self.active[name] = platform

    async def stop(self) -> None:
        for tasks in list(self.turns.values()):
            for task in tasks:
                task.cancel()
        await self.supervisor.stop()
        for name, platform in list(self.active.items()):
            try:
                async with asyncio.timeout(5):
                    await platform.stop()
            except Exception:
                logger.exception("platform %s failed to stop", name)
        self.active.clear()
        if self.mcp is not None:
            await self.mcp.stop()  # the singletons' state is saved while we still lead
        if self.leadership is not None:
            await self.leadership.resign()  # another host takes over at once
        if self.events is not None:
            await self.events.close()
        await self.crosshost.stop()
        await call_each(self.pm, "shutdown", host=self)
        if self._http is not None:
            await self._http.stop()
        if self._llm is not None and hasattr(self._llm, "close"):
            await self._llm.close()
        self.store.close()
        if self.host_lock is not None:
            self.host_lock.release()
            self.host_lock = None
        self.started = False

    def supervise(self, name: str, factory: Callable[[], Awaitable[Any]]) -> None:
        """Run a long-lived coroutine; log and restart it if it fails."""
        self.supervisor.spawn(name, factory)

    def take_config_live(self, path: str, keys: Iterable[str], apply: Apply) -> None:
        """See :meth:`bothost.api.HostApi.take_config_live`."""
        self.live_sections.add(path, keys, apply)

    # --- messages -----------------------------------------------------------------------------

    def session_for(self, message: IncomingMessage) -> Session:
        return Session(
            id=str(message.address),
            address=message.address,
            user=message.user,
            is_admin=message.is_admin,
            platform=self.active.get(message.address.platform)
            or self.platforms.get(message.address.platform),
        )

    async def take_delivery(self, message: IncomingMessage, keep: float) -> bool:
        """See :meth:`bothost.api.HostApi.take_delivery`."""
        return await self.inbox.take(message, keep)

    async def release_delivery(self, message: IncomingMessage) -> None:
        """See :meth:`bothost.api.HostApi.release_delivery`."""
        await self.inbox.release(message)

    async def handle_message(
        self,
        message: IncomingMessage,
        *,
        on_text: TextSink | None = None,
        on_status: TextSink | None = None,
        platform: Any = None,
        on_start: Starting | None = None,
    ) -> Reply:
        """Run an agent turn for ``message``, or stop the session's turns if it says to.

        A stop goes straight through; anything else of a :class:`Serial` platform waits for
        the session's turn before it (:mod:`bothost.host.inbox`), then ``on_start`` runs."""
        await call_each(self.pm, "on_message", message=message)
        if is_stop(message.text):
            cancelled = await self.stop_turns(message.address, within=message.stops_channel)
            return Reply.for_stop(cancelled)
        serial = actual(platform or self.platforms.get(message.address.platform))
        if not (isinstance(serial, Serial) and serial.serial):
            return await self._answer(message, on_text, on_status, platform, on_start)
        async with self.inbox.place(str(message.address)):
            return await self._answer(message, on_text, on_status, platform, on_start)

    async def _answer(
        self,
        message: IncomingMessage,
        on_text: TextSink | None,
        on_status: TextSink | None,
        platform: Any,
        on_start: Starting | None,
    ) -> Reply:
        """The message's answer once it is its session's turn: `/new`, `/prompt`, a turn."""
        if on_start is not None:
            await on_start(message)
        if fresh.is_new(message.text):  # `/new`: no turn, no model
            return Reply(await fresh.start(self, self.session_for(message)))
        text, untrusted = with_context(message)
        command = prompt_command.parse(message.text)
        if command is not None:  # `/prompt …`: a listing or a mistake, or the person's turn
            answer = await prompt_command.answer(command, self.mcp)
            if not answer.turn:
                return Reply(answer.reply)
            text, untrusted = answer.turn, True
        session = self.session_for(message)
        if platform is not None:
            session.platform = platform
        turn = Turn(self, session, on_text=on_text, on_status=on_status)
        task = asyncio.ensure_future(self._run_turn(turn, session, text, untrusted))
        running = self.turns.setdefault(message.address, set())
        running.add(task)
        try:
            return await task
        except asyncio.CancelledError:
            if task.cancelled() and not current_task_cancelling():
                return Reply(STOPPED_TEXT, Outcome.STOPPED)  # stopped by cancel(), not by us
            raise
        finally:
            running.discard(task)
            if not running and self.turns.get(message.address) is running:
                del self.turns[message.address]

    async def _run_turn(self, turn: Turn, session: Session, text: str, untrusted: bool) -> Reply:
        """The turn, once no other host sharing the store runs one in this session."""
        try:
            async with self.session_locks.hold(session.id, self.config.agent.turn_timeout):
                return await turn.run(text, untrusted=untrusted)
        except SessionBusyError as exc:
            return Reply(f"Not now: {exc}. Try again in a moment.", Outcome.FAILED)

    def cancel(self, address: Address, within: bool = False) -> list[Address]:
        """Cancel every running turn of the session at ``address``; the sessions cancelled.

        With ``within``, every session in that address's channel (its threads) too.
        """
        cancelled = []
        for where, tasks in list(self.turns.items()):
            inside = where.platform == address.platform and where.channel == address.channel
            if where != address and not (within and inside):
                continue
            live = [task for task in tasks if not task.done()]
            for task in live:
                task.cancel()
            if live:
                cancelled.append(where)
        return cancelled

    async def stop_turns(self, address: Address, within: bool = False) -> list[Address]:
        """:meth:`cancel` here and on every other host sharing the store (see
        :mod:`bothost.agent.stopper`); the sessions cancelled anywhere."""
        return await self.stopper.stop(address, within)

    async def ask(self, address: Address, question: Question) -> Any:
        """Ask a person through the platform of ``address``; None when nobody can answer."""
        platform = self.active.get(address.platform)
        if not isinstance(platform, Asking):
            return None
        return await platform.ask(address, question)

    # --- events and briefings -----------------------------------------------------------------

    @property
    def intake(self) -> Intake:
        """The one way in for pushed events (:mod:`bothost.events.intake`), on the queue
        running now (a command starts one of its own)."""
        if self._intake is None or self._intake.queue is not self.events:
            self._intake = Intake(self.pm, self.events, self.queries)
        return self._intake

    async def ingest_event(
        self, source: str, type: str, payload: dict[str, Any], dedupe_key: str | None = None
    ) -> int | None:
        """A plugin's event through the intake; the row id or None (dropped, deduped,
        refused). Raises what kept it out (see :meth:`bothost.api.HostApi.ingest_event`)."""
        event = Event(source=source, type=type, payload=payload, dedupe_key=dedupe_key)
        (outcome,) = await self.intake.take([event])
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome if isinstance(outcome, int) else None

    async def ingest_webhook_event(
        self, webhook_id: str, source: str, type: str, payload: dict[str, Any]
    ) -> Receipt:
        """Queue an event sent once-only: see :meth:`bothost.api.HostApi.ingest_webhook_event`."""
        ids = self.once_ids
        if webhook_id in ids.inflight:  # a retry of a request still being handled: after it
            await ids.enter(webhook_id)
        else:  # enter() without a coroutine, for the common case
            ids.inflight[webhook_id] = []
        try:
            if ids.known(webhook_id):
                return Receipt(duplicate=True)
            event = Event(source=source, type=type, payload=payload, dedupe_key=webhook_id)
            (outcome,) = await self.intake.take([event], once_id=webhook_id)
            if isinstance(outcome, BaseException):
                raise outcome
            ids.note(webhook_id)
        finally:
            ids.leave(webhook_id)
        if ids.clock() - ids.pruned_at > PRUNE_EVERY:  # prune()'s own test, without a call
            await ids.prune()
        if isinstance(outcome, Dropped):
            return Receipt(dropped=True)
        return outcome if isinstance(outcome, Receipt) else Receipt(event_id=outcome)

    async def take_events(self, events: list[Event], patience: float | None = None) -> list[Taken]:
        """An MCP server's backlog through the intake, one outcome per event, in order.

        The server cannot send them again: what the store fails to take is held and written
        again, and this await lasts as long (back-pressure on the server), unless
        ``patience`` seconds (a command's servers) run out first."""
        return await self.intake.take(events, patience=patience)

    async def deliver(self, target: str, briefing: Briefing) -> Any:
        """Deliver a briefing to one address; raises when the platform fails."""
        return await self._deliver(target, briefing)

    async def propose_triage_rule(self, event_ids: list[int], direction: str) -> TriageProposal:
        tick = self.config.tick
        return await self.store.run(
            lambda db: triage_proposal.propose(db, tick, list(event_ids), direction)
        )

    async def apply_triage_rule(
        self, proposal: TriageProposal | str, by: str, admin: bool
    ) -> TriageApplied:
        key = proposal.key if isinstance(proposal, TriageProposal) else proposal
        if not admin:  # DESIGN: applied by an admin's confirmation; anyone else is told who can
            return TriageApplied(False, who_can(self.config))
        tick = self.config.tick
        return await self.store.run(lambda db: triage_proposal.apply(db, tick, key, by))

    async def tick_now(self, trigger: str) -> TickResult:
        """One tick now: the running ticker's, or one of its own in a CLI process."""
        from bothost.host.wiring import tick_once

        return await tick_once(self, trigger)

    async def explain_tool_call(
        self, tool: str, arguments: dict[str, Any], session: Session
    ) -> dict[str, Any]:
        found = self.registry.lookup(tool, True)
        return (await explain(self, tool, arguments, session, found)).to_dict()

    async def schedules(self, owner: str | None = None) -> list[dict[str, Any]]:
        found = await self.store.run(lambda db: list_jobs(db, owner))
        return [job.as_dict() for job in found]

    async def cancel_schedule(self, job_id: int, by: str, admin: bool = False) -> dict[str, Any]:
        job = await self.store.run(lambda db: cancel_job(db, job_id, by, admin=admin))
        return job.as_dict()

    # --- for tools (see bothost.api.HostApi) --------------------------------------------------

    def tool_groups(self, session: Session) -> list[Group]:
        return self.registry.groups(session.is_admin)

    def group_tools(self, group: str) -> list[Tool]:
        return self.registry.group_tools(group)

    async def grant_tools(self, session: Session, groups: list[str]) -> None:
        await history.grant(self.store, session.id, groups)
        await self.registry.settle(set(groups))  # what activation describes is what is ready

    async def not_offered(self, session: Session, beside: int = 0) -> dict[str, tuple[int, str]]:
        granted = await history.grants(self.store, session.id)
        budget = tool_budget(self.config.llm)  # as the turn's next request computes it
        return self.registry.not_offered(granted, session.is_admin, budget, beside)

    def read_spill(self, ref: str, offset: int = 0) -> str:
        return spill.read(
            self.home / "spill", ref, offset, spill.chunk_size(self.config.agent.output_budget)
        )

    async def add_mcp_server(
        self, name: str, config: McpServerConfig, origin: str, settle: float
    ) -> McpServerRow:
        manager = self.mcp_manager()
        await manager.add_server(name, config, origin=origin)
        runner = manager.runners.get(name)
        if runner is not None:
            await runner.wait_settled(settle)
        return self.mcp_row(name)

    async def remove_mcp_server(self, name: str) -> None:
        await self.mcp_manager().remove_server(name)

    async def start_mcp_login(self, name: str, redirect_uri: str) -> str:
        return await start_login(self.mcp_manager(), name, redirect_uri)

    async def mcp_login_link(self, server: str, admin: str) -> str | None:
        from bothost.mcp.oauth import links

        token = await self.store.run(lambda db: links.issue(db, server, admin))
        if token is None:
            return None
        base = links.public_base(self.config)
        return links.link_url(base, server, token) if base else ""

    async def tell_login_needed(self, server: str, why: str) -> None:
        """Tell the admins of every running platform that can (each admin once per spell:
        :meth:`mcp_login_link` says who was told) that a remote server waits for a login."""
        notice = LoginNotice(server, why, f"bothost mcp login {server}")
        for name, platform in list(self.active.items()):
            if not isinstance(platform, Notifying):
                continue
            try:
                async with asyncio.timeout(NOTICE_TIMEOUT):
                    await platform.notify_login_needed(notice)
            except Exception:  # boundary: one platform's failure must not silence another's
                logger.exception("telling %s's admins that %s needs a login failed", name, server)

    async def _tell_pending_logins(self) -> None:
        """Servers that reached login_needed before the platforms were up were told nobody."""
        if self.mcp is None or not self.mcp.publish_status:
            return  # a one-shot command's servers tell nobody (it says so itself)
        for status in self.mcp.status():
            if status.state == "login_needed":
                await self.tell_login_needed(status.name, status.error or "")

    async def set_mcp_enabled(self, name: str, enabled: bool) -> McpServerRow:
        await self.mcp_manager().set_enabled(name, enabled)
        return self.mcp_row(name)

    async def complete_prompt(self, text: str) -> list[str]:
        """Completions of a ``/prompt`` line as typed (:mod:`bothost.agent.prompt_completion`)."""
        return await prompt_completion.candidates(text, self.mcp)

    def mcp_manager(self) -> Any:
        if self.mcp is None:
            raise McpManagerError("MCP servers are not running in this process.")
        return self.mcp

    def mcp_row(self, name: str) -> McpServerRow:
        return next(row for row in self.queries.mcp_servers() if row.name == name)


def with_context(message: IncomingMessage) -> tuple[str, bool]:
    """The user's text, preceded by the earlier thread messages the platform supplied, and
    whether anyone but the sender wrote part of it.

    Those messages are wrapped as untrusted content (so no line of theirs can pass for the
    person's own, or start a section of its own), and when another author wrote any of
    them -- anyone in a Slack channel, another app's bot -- the turn is flagged untrusted
    for the interlock, like a ``/prompt`` turn or an untrusted tool result.
    """
    if not message.context:
        return message.text, False
    lines = [f"{m.get('user', '?')}: {m.get('text', '')}" for m in message.context]
    others = any(m.get("user") != message.user for m in message.context)
    wrapped = wrap_untrusted("\n".join(lines), "earlier messages in this thread")
    return f"{wrapped}\n\n{ANSWER_LABEL}\n{message.text}", others


def current_task_cancelling() -> bool:
    task = asyncio.current_task()
    return bool(task and task.cancelling())


if TYPE_CHECKING:  # mypy checks here that the host provides everything plugins are promised

    def _as_host_api(host: Host) -> HostApi:
        return host
