"""Every hook a bothost plugin can implement, with its contract.

Plugins are pluggy plugins of the project ``bothost``: modules or objects whose functions
are decorated with :data:`hookimpl`. Three kinds of hook exist:

* **Registration hooks** (``register_*``) are synchronous and called once at startup with a
  ``register`` callback, so each registered item knows which plugin registered it. An
  exception in one stops startup with a message naming the plugin (startup is fail-fast).
* **Runtime hooks** (``startup``, ``shutdown``, ``on_message``, ``event_received``,
  ``on_briefing``, ``system_prompt``, ``doctor_checks``) may be plain functions or
  ``async def``. The host calls
  each implementation separately, awaits it when it returns an awaitable, and logs and skips
  an implementation that raises (the others still run).
* **Policy hooks** (``approve_tool_call``) are synchronous and ``firstresult``: the first
  implementation returning something other than ``None`` decides.

Hooks are always called with keyword arguments; an implementation may accept any subset of
them. Parameters are only ever added, never renamed or removed. Implementations are called
in plugin registration order (:func:`bothost.hooks.call.impls`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import pluggy

if TYPE_CHECKING:
    import click
    from aiohttp import web

    from bothost.agent.approvals import ToolCall
    from bothost.api import HostApi
    from bothost.config import Config, LlmConfig
    from bothost.llm.base import Provider
    from bothost.models import Briefing, Event, IncomingMessage, Session
    from bothost.platform import Platform
    from bothost.store import Conn

PROJECT = "bothost"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

# --- what the hooks hand a plugin: the ``register`` callbacks and the doctor's ``report`` ---

ProviderFactory = Callable[["LlmConfig"], "Provider"]
# an offline command: the text after its word -> a tool call (name, JSON arguments), or a
# line to say instead (a usage error)
OfflineCommand = Callable[[str], "tuple[str, dict[str, Any]] | str"]


class RegisterTool(Protocol):
    """``register_tools``' callback: a plain function becomes a tool."""

    def __call__(
        self,
        func: Callable[..., object],
        *,
        name: str | None = None,
        description: str | None = None,
        schema: dict[str, Any] | None = None,
        private: bool = False,
        untrusted: bool = False,
        egress: str = "none",
        destructive: bool = False,
        timeout: float | None = None,
        egress_of: Callable[[dict[str, Any], Session], str] | None = None,
    ) -> object: ...


class RegisterMigration(Protocol):
    """``register_migrations``' callback."""

    def __call__(
        self, component: str, number: int, apply: Callable[[Conn], object], name: str = ""
    ) -> None: ...


class Report(Protocol):
    """``doctor_checks``' callback: one finding."""

    def __call__(self, check: str, ok: bool, detail: str, fix: str = "") -> None: ...


# --- registration hooks (sync, called once at startup) -------------------------------------


@hookspec
def register_platforms(register: Callable[[Platform], None]) -> None:
    """Register chat platforms (objects with ``name``, ``start``, ``stop``, ``send``, ``ask``).

    Called once at startup. ``register(platform)`` takes an object following
    :class:`bothost.platform.Platform`; its ``name`` is the address prefix it serves
    (``slack``, ``web``, ``console``, ``webhook``). Sync. An exception stops startup.
    """


@hookspec
def register_llm_providers(register: Callable[[str, ProviderFactory], None]) -> None:
    """Register LLM providers by name.

    Called once at startup. ``register(name, factory)`` where ``factory(config)`` receives the
    ``llm`` section (:class:`bothost.config.LlmConfig`; its ``max_retries`` is how many
    times to retry a failed request: 0 for doctor's probe) and returns an object with an async
    ``complete(request)`` (see :mod:`bothost.llm`). The host records every call's
    ``response.usage`` (an estimate when it is None or no token counts) and refuses calls
    over a daily budget; a provider that calls no model says ``free = True``. Sync. An
    exception stops startup.
    """


@hookspec
def register_tools(register: RegisterTool) -> None:
    """Register native tools the agent may call.

    Called once at startup. ``register(func)`` takes a plain function (sync or async): its
    name becomes the tool name, its docstring the description and its type hints the JSON
    schema. ``register(func, name=…, description=…, schema=…, private=…, untrusted=…,
    egress="none"|"fixed"|"chosen", destructive=…, timeout=…)`` states more.
    ``egress_of=f`` makes one call's egress depend on its arguments: ``f(arguments, session)``
    returns that call's egress, which the interlock and approvals judge, never less than
    ``egress`` (``schedule`` is ``chosen`` when its target is another conversation). A
    function that declares nothing has no capabilities, so it never needs approval. Sync. An
    exception stops startup.
    """


@hookspec
def register_routes(app: web.Application) -> None:
    """Add aiohttp routes to the host's one HTTP application.

    Called once while the host builds its :class:`aiohttp.web.Application`, before it
    starts listening. ``app[bothost.api.HOST]`` (an aiohttp ``AppKey``) is the host, as a
    :class:`bothost.api.HostApi`. Sync. An exception
    stops startup.
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add commands to the ``bothost`` command line.

    Called once when the CLI starts. ``cli`` is the root :class:`click.Group`; add commands
    or groups with ``cli.add_command`` or ``@cli.command()``. Sync. An exception is reported
    and the command line goes on without that plugin's commands.
    """


@hookspec
def register_migrations(register: RegisterMigration) -> None:
    """Add database migrations for a plugin's own tables.

    Called once when the store opens. ``register(component, number, apply, name="")`` where
    ``component`` is a name owned by the plugin, ``number`` counts from 1 within it and
    ``apply(conn)`` receives a :class:`bothost.store.Conn` inside a transaction, on SQLite or
    PostgreSQL: write DDL once in SQLite's type names and run it with ``conn.script(ddl)``
    (``bothost.store.sql(ddl)`` is such an ``apply``), branching on ``conn.dialect`` only
    where the two must differ (docs/plugins.md, "Writing SQL for both backends"). Migrations
    are append-only: never change one that has shipped. Sync. An exception stops startup.
    """


@hookspec
def register_config(register: Callable[[str, type], None]) -> None:
    """Declare the config sections this plugin owns, so they are checked at load.

    Called once while the config loads, before any other hook and for every command (a
    wrong value stops ``config show``, ``doctor``, ``run``, ``tick`` and ``chat`` alike).
    ``register(path, schema)``: ``path`` is ``"platforms.NAME"`` (a platform's section, NAME
    being its address prefix) or a top-level ``"NAME"`` that is not a core key; ``schema`` is
    a dataclass in the core's schema language: fields typed ``str``, ``int``, ``float``,
    ``bool``, ``list[X]``, ``dict[str, X]``, nested dataclasses or ``X | None``, each with a
    default; optional class attributes ``CHOICES`` (``{"mode": ("a", "b")}``), ``DURATIONS``
    (``float`` fields written ``30s``/``15m``) and ``SECRETS`` (keys masked in ``config
    show`` whatever their name). An unset ``${env:…}`` inside the section is an error while
    its ``enabled`` field is true (or when it has none), unless the schema defines
    ``needs_env(self, key_path) -> bool`` to decide. The built section is read back as
    ``host.config.platforms.NAME`` or ``host.config.section("NAME")``. A section no plugin
    declares is an unknown key; two plugins declaring one path is an error. Sync. An
    exception stops startup (exit status 2).
    """


@hookspec
def register_offline_commands(register: Callable[[str, str, OfflineCommand], None]) -> None:
    """Teach the offline agent (``llm.provider: offline``, no model) this plugin's commands.

    Called once when the host is built. ``register(word, help, command)``: a message whose
    first word is ``word`` (lower case) becomes ``command(rest)``, ``rest`` being the text
    after the word, which returns the tool call to make, ``(tool_name, arguments)``, or a
    line to say instead (a usage error); ``help`` is the line the agent's ``help`` lists for
    it. A word registered twice keeps the first registration. Sync. An exception stops
    startup.
    """


# --- runtime hooks (sync or async; each implementation isolated) --------------------------


@hookspec
def startup(host: HostApi) -> None:
    """The host has opened its store and plugins and is about to serve.

    Called once per run with the host, as the interface plugins may use
    (:class:`bothost.api.HostApi`), by the commands that start a host (``bothost run``,
    ``bothost chat``); the others build the host without starting it but still call
    ``event_received`` and ``on_briefing``. May be async. An exception is logged with the plugin's
    name and the host starts anyway.
    """


@hookspec
def shutdown(host: HostApi) -> None:
    """The host is stopping (SIGINT, SIGTERM, or the end of ``bothost chat``).

    Called with the same :class:`bothost.api.HostApi` as ``startup``. May be async; each
    implementation gets a few seconds. An exception is logged and the other implementations
    still run.
    """


@hookspec
def on_message(message: IncomingMessage) -> None:
    """An :class:`bothost.models.IncomingMessage` arrived, before the agent sees it.

    For observers (logging, metrics, auto-replies in other systems). May be async. The return
    value is ignored. An exception is logged and isolated.
    """


@hookspec
def event_received(event: Event) -> bool | None:
    """An :class:`bothost.models.Event` arrived from an MCP server, a webhook or the CLI.

    Implementations may enrich ``event.payload`` in place, or return ``False`` to drop the
    event; every implementation is called, and the event is queued only if none returned
    ``False``. May be async. An exception is logged and counts as "keep".
    """


@hookspec
def on_briefing(briefing: Briefing) -> None:
    """A :class:`bothost.models.Briefing` was rendered and is about to be delivered.

    Observers only: the delivery targets come from ``tick.deliver_to``. May be async. An
    exception is logged and isolated; delivery goes on.
    """


@hookspec
def system_prompt(session: Session) -> str | None:
    """Return a fragment (a string, or ``None``) to add to the agent's system prompt.

    Called before each request to the model with the :class:`bothost.models.Session`: once
    per round of a turn, so a turn that calls tools asks again for each round. May be async.
    Fragments are joined in plugin registration order. An exception is logged and the
    fragment skipped.
    """


@hookspec
def doctor_checks(config: Config, offline: bool, report: Report) -> None:
    """Check what would fail at run time in this plugin's part, for ``bothost doctor``.

    Called once per ``bothost doctor`` with the loaded :class:`bothost.config.Config`
    (plugin sections included) and ``offline`` (true with ``--offline``: contact no outside
    service). Report each finding with ``report(check, ok, detail, fix="")``: ``check`` names
    what was checked (``"slack"``), ``detail`` says what was found, ``fix`` how to fix it. A
    finding named like one of the core's replaces it, so a platform judges its own
    ``tick.deliver_to`` targets by reporting ``"deliver_to slack:C1"``. May be async (given
    a deadline of a minute). An exception is logged and reported as a failed finding named
    after the plugin; the other checks still run.
    """


# --- policy hooks (sync, firstresult) -----------------------------------------------------


@hookspec(firstresult=True)
def approve_tool_call(call: ToolCall, session: Session) -> str | None:
    """Decide whether a tool call may run: ``"allow"``, ``"deny"``, ``"ask"`` or ``None``.

    Called before every tool call with the :class:`bothost.agent.approvals.ToolCall` and
    the :class:`bothost.models.Session`. The first non-``None`` answer wins. It is weighed
    with the permission rule that decides the call (``permissions``, ``bothost rules``: the
    first that matches, but a ``deny`` that matches too beats an ``ask`` above it): the
    stricter of the two applies (``deny`` over ``ask`` over ``allow``); ``None`` and no rule
    means the configured ``agent.approval`` mode decides. Neither can lift the lethal-trifecta
    interlock, which refuses before this hook is called. Must be sync (a coroutine would
    always "win"); the asking itself is done by the platform's async ``ask()``. An exception
    is logged and counts as ``"deny"``.
    """
