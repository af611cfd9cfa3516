"""The host as plugins, platforms, hooks and tools see it (:class:`HostApi`); turn replies.

:class:`HostApi` is a :class:`typing.Protocol` that :class:`bothost.host.host.Host` satisfies; code
outside ``bothost/`` is typed against it instead of the host object, so the host's internals
(its task table, its event queue, its MCP manager) can change without chasing callers. It
is deliberately small: start and stop turns, deliver, ingest events, ask a person, read core
data through :attr:`HostApi.queries`. Core tables are private to core: ``store`` is there
for a plugin's *own* tables (created through ``register_migrations``), never for core ones.

A turn ends in a :class:`Reply`: its text and an :class:`Outcome`, so a platform decides
what to show by the outcome, never by comparing reply text. Stop words, the order of a
conversation's messages and redelivered messages are the host's to handle
(:meth:`HostApi.handle_message`, :meth:`HostApi.take_delivery`): a platform translates its
wire to a message and a reply back, nothing more.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload, runtime_checkable

from bothost.logs.rate import RateLimitedLog as RateLimitedLog  # public: a plugin's warnings
from bothost.models import Address, Briefing, IncomingMessage, Session

if TYPE_CHECKING:
    from aiohttp import web

    from bothost.agent.registry import Group
    from bothost.agent.tools import Tool
    from bothost.config import Config, McpServerConfig
    from bothost.events.tick import TickResult
    from bothost.platform import Platform, Question
    from bothost.queries import McpServerRow, Queries
    from bothost.store import Conn, Store

TextSink = Callable[[str], Awaitable[None]]
# Called by the host once a message is its session's turn (never for a stop word): the
# platform shows it is working and may add what it reads only then (``message.context``).
Starting = Callable[[IncomingMessage], Awaitable[None]]
T = TypeVar("T")
# What a person answered (:meth:`HostApi.ask`): yes or no, or the ``value`` of a further
# choice, for an approval, maybe as (that answer, who answered); a form's fields (JSON); or
# None when nobody answered.
Answer = bool | str | tuple[bool | str, str] | dict[str, Any] | None

STOP_WORDS = frozenset({"stop", "/stop", "cancel"})  # a whole message saying only this stops
STOPPED_TEXT = "Stopped."
NOTHING_RUNNING_TEXT = "Nothing is running."


def is_stop(text: str) -> bool:
    """Whether a message asks to stop the running turn(s) rather than start one."""
    return text.strip().lower() in STOP_WORDS


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, no port) is this machine: ``localhost`` or a
    loopback address. One answer for the config check (a non-loopback bind needs a token)
    and the web plugin (who is served without one)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# Characters of an event's type, for every producer (MCP servers, webhooks, `events push`,
# plugins): a type names a kind of event for rules and listings; a longer one is refused.
MAX_EVENT_TYPE = 200


class EventRejectedError(ValueError):
    """This one event can never be stored (:meth:`HostApi.ingest_event` raises it)."""


class SourceHeldError(Exception):
    """The event's source has ``tick.max_pending_per_source`` events pending: this one is
    not queued (nothing was recorded); send it again after ``retry_after`` seconds, once a
    tick has taken some (:meth:`HostApi.ingest_event` raises it; see docs/events.md)."""

    def __init__(self, source: str, pending: int, limit: int, retry_after: int) -> None:
        super().__init__(
            f"source {source!r} is held: its pending events ({pending:,}) are at"
            f" tick.max_pending_per_source ({limit:,}); send it again once a tick has taken"
            " some"
        )
        self.source, self.pending = source, pending
        self.limit, self.retry_after = limit, retry_after


class Outcome(StrEnum):
    """How a turn, or a request to stop turns, ended."""

    REPLIED = "replied"  # the agent answered
    STOPPED = "stopped"  # this turn was cancelled, or this stop request cancelled turns
    NOTHING_RUNNING = "nothing-running"  # a stop request found no turn to cancel
    FAILED = "failed"  # the turn ended without an answer: timeout, model error, round limit
    REFUSED = "refused"  # a daily usage budget is spent: the model was not asked


@dataclass(frozen=True)
class Reply:
    """What :meth:`HostApi.handle_message` returns: the text to show and how the turn ended.

    ``cancelled`` lists the sessions a stop request cancelled (empty otherwise).
    """

    text: str
    outcome: Outcome = Outcome.REPLIED
    cancelled: tuple[Address, ...] = ()

    @classmethod
    def for_stop(cls, cancelled: Sequence[Address]) -> Reply:
        """The answer to a stop request that cancelled ``cancelled`` (maybe nothing)."""
        if cancelled:
            return cls(STOPPED_TEXT, Outcome.STOPPED, tuple(cancelled))
        return cls(NOTHING_RUNNING_TEXT, Outcome.NOTHING_RUNNING)


@dataclass(frozen=True)
class Receipt:
    """What became of an event sent with a once-only id (:meth:`HostApi.ingest_webhook_event`).

    Exactly one of: queued (``event_id``), a ``duplicate`` of an id received before (nothing
    was done this time), or ``dropped`` by an ``event_received`` hook (the id is recorded).
    """

    event_id: int | None = None
    duplicate: bool = False
    dropped: bool = False


@dataclass(frozen=True)
class TriageProposal:
    """What "Less like this" / "More like this" on a briefing item offers
    (:meth:`HostApi.propose_triage_rule`): ``text`` to show the person, and, when there is a
    rule to offer, the ``key`` a confirm button carries to :meth:`HostApi.apply_triage_rule`
    (``""``: nothing to apply, ``text`` says why), the rule's ``match`` and ``priority``,
    and the priority the rules give the item now (``was``)."""

    direction: str  # less | more
    text: str
    key: str = ""
    match: dict[str, str] = field(default_factory=dict)
    priority: str = ""
    was: str = ""


@dataclass(frozen=True)
class TriageApplied:
    """What confirming a proposal did: ``applied`` (stored now or already), a line for the
    person, and the stored rule's id."""

    applied: bool
    text: str
    rule_id: int | None = None


@dataclass(frozen=True)
class Notice:
    """A cross-host message as a subscriber receives it (see :class:`CrossHost`)."""

    topic: str
    data: dict[str, Any]
    here: bool  # published by this host (it may have acted on it already)


NoticeHandler = Callable[[Notice], Awaitable[None]]
Resync = Callable[[], Awaitable[None]]
Respond = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


@runtime_checkable
class CrossHost(Protocol):
    """Messages between the hosts that share one store (``bothost.crosshost``).

    A notice published on one host reaches the subscribers of its topic on every host, this
    one included, once each; on SQLite (one host) it stays in the process. Notices are not
    durable: what must not be lost is written to the store first and the notice only says
    "look" (ids, never bodies: at most :data:`bothost.crosshost.MAX_NOTICE_BYTES` of JSON),
    and ``resync`` runs whenever notices may have been missed (a listener connection that
    came back), to read the store again.
    """

    @property
    def shared(self) -> bool:
        """Whether other hosts may be listening (PostgreSQL); False in-process (SQLite)."""

    def subscribe(self, topic: str, handler: NoticeHandler, resync: Resync | None = None) -> None:
        """Call ``handler`` for each notice of ``topic``; ``resync`` after any gap."""

    @overload
    async def publish(self, topic: str, data: dict[str, Any]) -> None: ...

    @overload
    async def publish(self, topic: str, data: dict[str, Any], write: Callable[[Conn], T]) -> T:
        """Send a notice to every host; ``write(conn)``, if given, runs in the same store
        transaction (so no host looks before the row is there) and its result is returned.
        ValueError for data over the size limit."""

    async def ask(self, topic: str, data: dict[str, Any]) -> list[dict[str, Any]]:
        """Ask the other hosts (those that :meth:`answer` ``topic``); the answers that came
        within a few seconds (none on one host)."""

    def answer(self, topic: str, respond: Respond) -> None:
        """Answer the other hosts' :meth:`ask` of ``topic`` with ``await respond(data)``."""


@runtime_checkable
class HostApi(Protocol):
    """What plugins, platforms, hooks and tools may use of the host."""

    @property
    def config(self) -> Config:
        """The loaded configuration (read it; never change it at run time)."""

    @property
    def home(self) -> Path:
        """``BOTHOST_HOME``: a plugin keeps its files in a subdirectory named after itself."""

    @property
    def store(self) -> Store:
        """The database, for the plugin's own tables only (see ``register_migrations``)."""

    @property
    def queries(self) -> Queries:
        """Core data: reads (messages, tool calls, events, ticks, sessions, metrics figures)
        and the few changes plugins make (event feedback, webhook receipts)."""

    @property
    def crosshost(self) -> CrossHost:
        """Messages to the other hosts sharing the store (and to this one's subscribers)."""

    @property
    def max_event_payload(self) -> int:
        """The largest event payload, in bytes of JSON, that :meth:`ingest_event` accepts."""

    async def handle_message(
        self,
        message: IncomingMessage,
        *,
        on_text: TextSink | None = None,
        on_status: TextSink | None = None,
        platform: Platform | None = None,
        on_start: Starting | None = None,
    ) -> Reply:
        """Run an agent turn for ``message`` (or, for a stop word, stop the session's turns).

        ``on_text`` receives the reply as it streams, ``on_status`` tool progress;
        ``platform`` is the object that asks and sends for this session (default: the one
        registered under the address's platform name). A stop word goes straight through
        (``message.stops_channel``: every session of the channel); a
        :class:`~bothost.platform.Serial` platform's message otherwise waits for the turn
        before it in its session, then ``on_start(message)`` is awaited.
        """

    async def take_delivery(self, message: IncomingMessage, keep: float) -> bool:
        """Whether ``message.delivery`` is new to every host sharing the store; recorded
        either way for ``keep`` seconds (the platform's retry window). False: a repeat, do
        nothing more with it. A message without a delivery id is always new. Raises the
        store's error when it cannot write."""

    async def release_delivery(self, message: IncomingMessage) -> None:
        """Forget ``message.delivery``: it failed before anything was answered, so the
        sender's retry may run it."""

    def cancel(self, address: Address, within: bool = False) -> list[Address]:
        """Cancel every running turn of the session at ``address``; the sessions cancelled.

        With ``within=True``, the turns of every session under that address's channel
        (a top-level ``stop`` in a Slack DM stops the threads of that DM).
        """

    async def stop_turns(self, address: Address, within: bool = False) -> list[Address]:
        """:meth:`cancel` on every host sharing the store: the sessions cancelled anywhere.

        Another host answers within a few seconds or is taken to have had nothing running.
        """

    async def ingest_event(
        self, source: str, type: str, payload: dict[str, Any], dedupe_key: str | None = None
    ) -> int | None:
        """Run the ``event_received`` hooks, then queue the event; its id, or None if dropped.

        Raises :class:`SourceHeldError` (nothing queued) while ``source`` has
        ``tick.max_pending_per_source`` events pending: a held event, not a dropped one."""

    async def ingest_webhook_event(
        self, webhook_id: str, source: str, type: str, payload: dict[str, Any]
    ) -> Receipt:
        """Queue an event whose sender retries with the same ``webhook_id`` until answered.

        The id's record and the event are committed together (in the queue's group commit),
        so once this returns a queued or dropped receipt, the same id from any host sharing
        the database is a duplicate; the ``event_received`` hooks run only for an id not
        seen before. Raises :class:`EventRejectedError` (nothing recorded) for an event that
        can never be stored, :class:`SourceHeldError` (nothing recorded) while the source
        is at its bound, and the store's error when it cannot write (nothing recorded).
        """

    async def deliver(self, target: str, briefing: Briefing) -> object:
        """Deliver a briefing to one address; raises when the platform fails. Returns what
        the platform's ``send_briefing`` did (its reference for the message, if any)."""

    async def propose_triage_rule(self, event_ids: list[int], direction: str) -> TriageProposal:
        """The "Less like this" (``direction`` ``less``) or "More like this" (``more``) of the
        briefing item of ``event_ids``: the narrowest triage rule that would have changed
        it, one priority step down or up, not stored (docs/events.md, Feedback)."""

    async def apply_triage_rule(
        self, proposal: TriageProposal | str, by: str, admin: bool
    ) -> TriageApplied:
        """Store the rule of ``proposal`` (or its ``key``) as a person confirms it: origin
        ``button``, added by ``by`` (platform-qualified, ``slack:U0123``). ``admin`` is
        whether the person's platform vouches they are an admin; anyone else's confirmation
        stores nothing and the answer says who can. ValueError for a key that is no
        proposal's."""

    async def ask(self, address: Address, question: Question) -> Answer:
        """Ask a person through the platform of ``address``; ``None`` when nobody can answer."""

    def platform(self, name: str) -> Platform | None:
        """The platform registered under ``name`` (started or not), or None."""

    def supervise(self, name: str, factory: Callable[[], Awaitable[object]]) -> None:
        """Run a long-lived coroutine under the host; logged and restarted if it fails."""

    def take_config_live(self, path: str, keys: Iterable[str], apply: Callable[[Any], Any]) -> None:
        """Take an edit of ``keys`` of this plugin's config section ``path`` while running.

        ``path`` as declared through ``register_config`` (``"platforms.slack"``), ``keys``
        top-level keys of that section. When a saved edit of the config file (or SIGHUP,
        ``bothost reload``) changes any of them, ``host.config`` gets the section with
        those keys as edited (its other keys as the host started) and ``apply(section)``
        is called with it; it may be async. The section's other changed keys are reported
        as "restart needed". If ``apply`` raises, the old section stays and the keys are
        reported as waiting for a restart. Call it from ``start`` (or ``startup``); a
        second call for one path replaces the first.
        """

    async def explain_tool_call(
        self, tool: str, arguments: dict[str, Any], session: Session
    ) -> dict[str, Any]:
        """How a call of ``tool`` by ``session`` would be decided, without running it: the
        action, the deciding permission rule and what matched, or the default's reason (what
        ``bothost rules test --json`` prints)."""

    async def schedules(self, owner: str | None = None) -> list[dict[str, Any]]:
        """The scheduled and failed jobs (docs/schedules.md), oldest first, each as
        ``bothost schedule list --json`` shows it; only ``owner``'s (platform-qualified)
        when given."""

    async def cancel_schedule(self, job_id: int, by: str, admin: bool = False) -> dict[str, Any]:
        """Cancel job ``job_id`` for ``by`` (platform-qualified); ``admin``: anyone's job.
        The job as it was; ValueError with a line for the person when ``by`` has no such
        job or it is over."""

    # --- for tools: what the built-in, events and admin tools need ---------------------------

    def tool_groups(self, session: Session) -> list[Group]:
        """The tool groups (MCP servers, ``config``) this session may activate."""

    def group_tools(self, group: str) -> list[Tool]:
        """The tools of one group, as the model would see them once it is activated."""

    async def grant_tools(self, session: Session, groups: list[str]) -> None:
        """Make these groups' tools visible to the session from its next round on."""

    async def not_offered(self, session: Session, beside: int = 0) -> dict[str, tuple[int, str]]:
        """The session's granted groups its next request will not offer, each with its tool
        count and why (too many tools, or too many tokens, beside the others); ``beside``
        counts the tools the turn adds of its own (:attr:`ToolContext.beside`)."""

    def read_spill(self, ref: str, offset: int = 0) -> str:
        """A chunk of a cut tool output, from ``offset``; ValueError for an unknown ``ref``."""

    async def complete_prompt(self, text: str) -> list[str]:
        """The words that may replace the last word of a partly typed ``/prompt`` line
        (server and prompt names, argument names, a server's suggested values)."""

    async def tick_now(self, trigger: str) -> TickResult:
        """Triage the event queue now and deliver briefings to ``tick.deliver_to``."""

    async def add_mcp_server(
        self, name: str, config: McpServerConfig, origin: str, settle: float
    ) -> McpServerRow:
        """Add (or replace) a run-time MCP server, start it and wait up to ``settle`` s.

        Raises ValueError with a message for the person when the change cannot be made
        (a bad name, a server defined in config, no MCP servers in this process).
        """

    async def remove_mcp_server(self, name: str) -> None:
        """Remove a run-time MCP server; ValueError as for :meth:`add_mcp_server`."""

    async def start_mcp_login(self, name: str, redirect_uri: str) -> str:
        """Begin an OAuth login to remote MCP server ``name``; the authorization URL for a
        person to open. The redirect comes to ``redirect_uri`` (the host's
        ``/oauth/callback`` as that person's browser reaches it) and the login finishes in
        the background. ValueError as for :meth:`add_mcp_server`."""

    async def set_mcp_enabled(self, name: str, enabled: bool) -> McpServerRow:
        """Enable or disable an MCP server; ValueError as for :meth:`add_mcp_server`."""

    async def mcp_login_link(self, server: str, admin: str) -> str | None:
        """A one-time link that starts a login to remote server ``server``, for ``admin``
        (a platform-qualified id such as ``slack:U0123``): see :mod:`bothost.mcp.oauth.links`.
        "" when the host has no public address (``platforms.web.public_url``) to put in front
        of it; None when this admin already holds a live link of this spell (tell them
        nothing again)."""


# a direct route's handler: the request and the path's last segment, decoded as the
# router decodes a ``{name}`` part
DirectHandler = Callable[["web.Request", str], Awaitable["web.StreamResponse"]]

if TYPE_CHECKING:
    HOST: web.AppKey[HostApi]  # in a route handler, request.app[HOST]
    DIRECT_ROUTES: web.AppKey[dict[str, DirectHandler]]  # see direct_post
    ANSWER_HEADERS: web.AppKey[dict[str, str]]  # see answer_headers


def direct_post(app: web.Application, prefix: str, handler: DirectHandler) -> None:
    """Serve ``POST {prefix}{segment}`` (one path segment) with ``handler(request, segment)``
    straight from the host's listener, without the application's router, middleware chain
    and ``on_response_prepare`` signal.

    For a route whose cost per request matters (the signed webhook events of issue 19, where
    that machinery was a fifth of what aiohttp itself costs). The listener still does, once
    and inline, what its middlewares do for every route: the connection guard (the body
    deadline, 408) and the store-failure 503s; an ``aiohttp.web.HTTPException`` raised, a
    ``100-continue``, and an unexpected exception (a JSON 500, logged) are answered as the
    application would. What the handler returns gets the headers declared with
    :func:`answer_headers` (where it has none of that name), and nothing else the signal's
    receivers would add. Register the same path as an
    ordinary route too: a plain application (a test's, say) serves it there, and other
    methods get their 405 from the router. Call from ``register_routes``.
    """
    if not prefix.startswith("/") or not prefix.endswith("/"):
        raise ValueError(f"a direct route's prefix starts and ends with '/': {prefix!r}")
    routes = app.setdefault(app_key("DIRECT_ROUTES"), {})
    if prefix in routes:
        raise ValueError(f"a direct route for {prefix!r} exists already")
    routes[prefix] = handler


def answer_headers(app: web.Application, headers: dict[str, str]) -> None:
    """Put ``headers`` on every answer the host's listener gives, where the answer has none
    of that name: the application's (after ``on_response_prepare``'s other receivers), and
    the ones no route makes — aiohttp's 400 for a request it cannot parse (a bad request
    line, bad chunking, an oversize header, two ``Content-Length``), its 500 and 504, and
    the 503 at the connection cap, and a direct route's answers (:func:`direct_post`).
    Several calls add up; a later value of the same name wins. Call from
    ``register_routes``.
    """
    app.setdefault(app_key("ANSWER_HEADERS"), {}).update(headers)


APP_KEYS = frozenset({"HOST", "DIRECT_ROUTES", "ANSWER_HEADERS"})  # made in bothost.http.appkeys


def app_key(name: str) -> Any:
    """The aiohttp ``AppKey`` named ``name`` (one of :data:`APP_KEYS`), made on first use."""
    from bothost.http import appkeys

    return getattr(appkeys, name)


def __getattr__(name: str) -> Any:
    """The app keys (:data:`APP_KEYS`), made on first use: importing aiohttp was a third
    of every CLI command's start (issue 19), and only the HTTP listener and its routes
    need the keys."""
    if name in APP_KEYS:
        return app_key(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
