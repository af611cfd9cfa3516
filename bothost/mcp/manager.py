"""The MCP manager: every server on the roster, kept running.

Which servers there should be — config (``mcp.servers``) plus the ``mcp_servers`` table,
a config server winning over a row of its name — is decided by
:func:`~bothost.mcp.roster.desired_servers`. Each gets a
:class:`~bothost.mcp.runner.ServerRunner`; all start in parallel and in the background —
nothing waits on a server unless it asks to (``start(wait=…)``), so one that hangs holds up
nobody. Run-time changes (``add_server``, ``remove_server``, ``set_enabled``) are written to
the table and applied at once; a running manager also re-reads the table every few seconds,
so ``bothost mcp add`` in another process reaches a running host without a restart.

The manager is what the rest of the host sees of the servers: the agent's registry asks it
for their tools (:class:`~bothost.agent.mcp_tools.McpToolSource`) and their ``event/*``
notifications go to its ``on_events`` callback a backlog at a time, as
:class:`~bothost.models.Event` s (the host's ``take_events``: the intake, which runs the
``event_received`` hooks and queues them together). Servers are not pluggy plugins: they
implement no hooks.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bothost.config import McpServerConfig
from bothost.config.check import address_problem, timeout_problem
from bothost.mcp import (
    concealed,
    environment,
    placement,
    prompts,
    resources,
    roots,
    roster,
    stored,
)
from bothost.mcp.content import CallResult
from bothost.mcp.elicitation import Ask, Asker
from bothost.mcp.handover import StateKeeper
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.oauth.tokens import DbTokens
from bothost.mcp.runner import ServerRunner, ServerStatus, describe
from bothost.models import Event
from bothost.rules.origin import server_source

logger = logging.getLogger(__name__)

RELOAD_INTERVAL = 5.0  # how soon a change made by another process (the CLI) is applied
# A server that starts normally (a local one in well under a second; npx/uvx fetching a
# package in a few) is waited for when a turn needs its tools; one that takes longer is
# listed once it is ready, so a hung server delays one turn by this much, once.
START_GRACE = 5.0
COMPLETE_WAIT = 3.0  # a suggestion later than this is no help to someone typing
SHADOWED_NOTE = "config defines a server of the same name; it wins"
# who wrote a stored server's description when it is not the operator: the package (mcp install)
# or the model (register_mcp); see McpManager.description
THIRD_PARTY_ORIGINS = frozenset({"install", "register_mcp"})


class McpManagerError(ValueError):
    """A run-time change that cannot be made (bad name, server defined in config, …)."""


class McpNotFoundError(McpManagerError):
    """No server (or no log) by that name: a command's own "no" (exit 1), not a usage error."""


class McpUnreachableError(McpManagerError):
    """The server did not answer (network, timeout): a failure (exit 1), not a usage error."""


def hints(definition: dict[str, Any]) -> dict[str, Any]:
    """What of a tool's definition its capabilities are read from
    (:func:`bothost.agent.mcp_tools.capabilities`): its ``annotations`` and ``_meta``."""
    return {
        k: definition[k] for k in ("annotations", "_meta") if isinstance(definition.get(k), dict)
    }


def status_path(home: Path) -> Path:
    return Path(home) / "state" / "mcp-status.json"


class McpManager:
    """See module docstring."""

    def __init__(
        self,
        servers: dict[str, McpServerConfig],
        store: Any,
        home: Path,
        on_events: Callable[..., Any] | None = None,
        ask: Ask | None = None,
        publish_status: bool = True,
        retry: bool = True,
        on_login_needed: Callable[[str, str], Any] | None = None,
        leadership: Any = None,
        on_demand: bool = False,
        subscribe: bool = True,
        sample: Callable[..., Any] | None = None,
    ) -> None:
        self.config_servers = dict(servers)
        # a command's servers start when something first needs them (a turn's tools, a
        # call, a listing), not all at start: `chat -m help` started every enabled server
        # for a turn that used none of them (issue 19)
        self.on_demand = on_demand
        self.subscribe = subscribe  # config `subscribe` followed (not by one-shot commands)
        self._demanded: set[str] = set()  # on demand: the servers needed so far
        # None: every server runs here (one-shot commands); else singletons follow leadership
        self.leadership = leadership
        self.store = store
        self.home = Path(home)
        self.on_events = on_events  # ([Event, …]): a server's backlog at once (the host's)
        self.ask = ask
        # (server, params, asker) -> CreateMessageResult: the host's model, for the servers
        # whose config says `sampling: true` (bothost.agent.sampling)
        self.sample = sample
        self.publish_status = publish_status
        self.retry = retry  # one-shot commands report a failure instead of retrying it
        self.on_login_needed = on_login_needed  # (name, why): admins told privately (a DM)
        self.runners: dict[str, ServerRunner] = {}
        self.shadowed: dict[str, stored.StoredServer] = {}
        self.added_by: dict[str, str] = {}  # per server: config, cli, install, register_mcp…
        self.started = False
        self._only: set[str] | None = None
        self.start_within: float | None = None  # see start()
        self._reloader: asyncio.Task | None = None
        self._background: set[asyncio.Task] = set()  # logins waiting for a person
        self._lock = asyncio.Lock()

    # -- lifecycle ---------------------------------------------------------------------

    async def start(
        self, only: set[str] | None = None, wait: float = 0.0, start_within: float | None = None
    ) -> None:
        """Start every enabled server (or those in `only`) in parallel, in the background;
        with `wait`, return once each is ready or failed, or after `wait` seconds. With
        `start_within` (a command's), each start, initialize and tools/list together, fails
        past that many seconds, naming the step that did not answer."""
        self.started = True
        self._only = only
        self.start_within = start_within
        for runner in self.runners.values():  # made by an earlier reload (commands.private)
            runner.start_within = start_within
        await self.reload()
        if wait:
            await self.settled(wait)
        if only is None:
            self._reloader = asyncio.create_task(self._reload_forever(), name="mcp-reload")

    async def settled(self, timeout: float) -> None:
        """Wait until each server meant to run now is ready or failed, or `timeout` passes
        (unlike :meth:`settle`, nothing is started or announced)."""
        started = [r for n, r in self.runners.items() if self.placed(n, r.config)]
        await asyncio.gather(*(r.wait_settled(timeout) for r in started))

    async def stop(self) -> None:
        """Stop every server: SIGTERM to each process group, SIGKILL after 3 s."""
        self.started = False
        if self._reloader is not None:
            self._reloader.cancel()
            await asyncio.gather(self._reloader, return_exceptions=True)
        for task in self._background:
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        runners = list(self.runners.values())
        await asyncio.gather(*(r.stop() for r in runners))
        if self.publish_status and runners:
            self._publish()  # `bothost mcp list` must not show a stopped host's servers as ready
        self.runners.clear()

    async def _reload_forever(self) -> None:
        while True:
            await asyncio.sleep(RELOAD_INTERVAL)
            try:
                await self.reload()
            except Exception:  # boundary: a bad row must not stop the other servers
                logger.exception("re-reading the mcp_servers table failed")

    async def set_config_servers(self, servers: dict[str, McpServerConfig]) -> None:
        """Serve the config file's servers as now edited: added ones start, removed ones
        stop, changed ones restart, the others run on untouched."""
        self.config_servers = dict(servers)
        await self.reload()

    async def reload(self) -> None:
        """Bring the running servers in line with config plus the table."""
        rows = await self.store.run(stored.load)
        async with self._lock:
            wanted = roster.desired_servers(self.config_servers, rows, self._only)
            self.shadowed = wanted.shadowed
            self.added_by = {name: server.added_by for name, server in wanted.servers.items()}
            await self._apply(wanted.servers)

    async def _apply(self, desired: dict[str, roster.DesiredServer]) -> None:
        for name in [n for n in self.runners if n not in desired]:
            await self.runners.pop(name).stop()
            self._changed(name)
        for name, server in desired.items():
            config, origin = server.config, server.origin
            runner = self.runners.get(name)
            if runner is not None and runner.config == config and runner.origin == origin:
                if config.enabled and self.started:
                    await self._place(runner)  # no-op while it runs as it should
                continue
            if runner is not None:
                await runner.stop()
            runner = ServerRunner(
                name,
                config,
                origin,
                home=self.home,
                # what a server pushes is stored: masked first, as its results are
                on_events=concealed.events(self.on_events),
                ask=self.ask,
                on_change=self._changed,
                retry=self.retry,
                tokens=DbTokens(self.store),
                on_login_needed=self._tell_login_needed,
                keeper=self._keeper(name, config),
                start_within=self.start_within,
                subscribe=self.subscribe,
                sample=self.sample,
            )
            self.runners[name] = runner
            if config.enabled and self.started:
                await self._place(runner)
            self._changed(name)

    # -- placement (several hosts on one store) ------------------------------------------

    @property
    def leading(self) -> bool:
        return self.leadership is None or bool(self.leadership.leading)

    async def _place(self, runner: ServerRunner) -> None:
        """Run an enabled server here, unless it is a singleton and another host leads (or,
        :attr:`on_demand`, until something needs it)."""
        if self.on_demand and runner.name not in self._demanded:
            return
        if self.leading or not placement.is_singleton(runner.config):
            runner.start()
        else:
            await runner.standby()

    async def leadership_changed(self, leading: bool) -> None:
        """Start this host's singletons when it becomes the leader, stop them when it stops
        being one (a :class:`~bothost.crosshost.leadership.Leadership` listener)."""
        async with self._lock:
            if not self.started:
                return
            for runner in list(self.runners.values()):
                if runner.config.enabled and placement.is_singleton(runner.config):
                    await self._place(runner)

    def _keeper(self, name: str, config: McpServerConfig) -> StateKeeper | None:
        """A singleton stdio server's state carrier, when hosts share the store."""
        shared = self.leadership is not None and self.leadership.shared
        if not shared or config.url or not placement.is_singleton(config):
            return None
        leadership = self.leadership
        return StateKeeper(
            self.store, name, placement.state_dir(self.home, name), lambda: leadership.owner
        )

    def spawn(self, work: Any, what: str) -> asyncio.Task:
        """Run `work` in the background until it ends or the manager stops; its failure
        is logged (a login nobody finished, an authorization server that refused)."""

        async def guarded() -> None:
            try:
                await work
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # boundary: a background job fails alone
                logger.warning("%s failed: %s", what, exc)

        task = asyncio.create_task(guarded(), name=what)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    # -- change notification -------------------------------------------------------------

    async def _tell_login_needed(self, name: str, message: str) -> None:
        """Tell an admin, once per spell, that a server waits for a login: an event the tick
        briefs to ``tick.deliver_to`` like any other (so it survives a restart and is
        deduplicated), since nobody may be talking to the bot when a refresh token dies; and
        ``on_login_needed``, which tells each admin privately with a login link."""
        if self.on_events is None or not self.publish_status:
            return  # a CLI command says so itself
        payload = {
            "id": f"login-needed-{int(time.time())}",
            "summary": f"MCP server {name} needs a login: an admin runs `bothost mcp login {name}`",
            "severity": "warning",
            "occurred_at": time.time(),
            "server": name,
            "why": message,
        }
        try:
            await self.on_events([Event(name, "bothost/login_needed", payload)])
        finally:  # the private notice (a Slack DM with a login link) goes out either way
            if self.on_login_needed is not None:
                await self.on_login_needed(name, message)

    def _changed(self, name: str) -> None:
        """A server's state or tools changed: tell other processes (the registry needs no
        telling, it asks for the tools every round)."""
        if self.publish_status and self.started:
            self._publish()

    def _publish(self) -> None:
        """Write the status for ``bothost mcp list`` in other processes."""
        path = status_path(self.home)
        data = {
            "pid": os.getpid(),
            "updated_at": time.time(),
            "servers": [s.to_dict() for s in self.status()],
            "listings": self._listings(),
        }
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(data, indent=1))
            os.replace(tmp, path)
        except OSError as exc:
            logger.warning("could not write %s: %s", path, exc)

    def _listings(self) -> dict[str, dict[str, Any]]:
        """Each ready server's tool names as it lists them, what it runs (``source``) and
        whether it has resources, and each tool's ``hints`` (its ``annotations`` and
        ``_meta``, what its capabilities are read from): enough for ``bothost rules add``
        and ``rules test`` in another process to know a tool's origin and capabilities
        without starting the server (bothost.agent.explain)."""
        out = {}
        for name, runner in self.runners.items():
            if runner.status().state != "ready":
                continue
            tools = [d for d in self.tools(name) if isinstance(d.get("name"), str)]
            out[name] = {
                "source": self.source(name),
                "tools": [d["name"] for d in tools],
                "resources": "resources" in self.capabilities(name),
                "hints": {d["name"]: hints(d) for d in tools},
            }
        return out

    # -- queries -----------------------------------------------------------------------

    def status(self) -> list[ServerStatus]:
        out = [runner.status() for runner in self.runners.values()]
        for name, row in self.shadowed.items():
            transport, target = describe(row.config)
            out.append(
                ServerStatus(
                    name,
                    roster.TABLE,
                    row.config.enabled,
                    "shadowed",
                    transport=transport,
                    target=target,
                    note=SHADOWED_NOTE,
                )
            )
        return sorted(out, key=lambda s: (s.name, s.origin != roster.CONFIG))

    async def settle(self, names: set[str], grace: float = START_GRACE) -> None:
        """Wait until each of these servers is ready or failed, or has been starting for
        `grace` seconds: what a turn lists is then what a server that starts normally offers,
        while one that hangs costs a turn its grace once, not every round. A server that
        starts :attr:`on_demand` starts now."""
        await self.demand(names)
        runners = [r for name, r in self.runners.items() if name in names]
        await asyncio.gather(*(r.settle(grace) for r in runners))

    async def demand(self, names: set[str]) -> None:
        """On demand, start those of these servers not started yet (no-op otherwise)."""
        if not self.on_demand:
            return
        async with self._lock:
            for name in sorted(names - self._demanded):
                runner = self.runners.get(name)
                if runner is None:
                    continue
                self._demanded.add(name)
                if runner.config.enabled and self.started:
                    await self._place(runner)

    def placed(self, name: str, config: McpServerConfig) -> bool:
        """Whether the server is meant to run now: enabled and, on demand, needed."""
        return config.enabled and (not self.on_demand or name in self._demanded)

    def waiting(self, status: ServerStatus) -> bool:
        """Whether a server is not running only because nothing has needed it yet: it is
        offered as one that is starting (it starts when activated)."""
        return self.on_demand and status.name not in self._demanded and status.state == "stopped"

    def not_ready(self) -> list[ServerStatus]:
        """Enabled servers that are not (yet) ready: still starting, or failed."""
        return [
            s
            for s in self.status()
            if s.enabled and s.state in ("starting", "failed", "login_needed", "stopped")
        ]

    def tools(self, server: str) -> list[dict[str, Any]]:
        """The server's MCP tool definitions (annotations, _meta and all), allowlist applied."""
        runner = self.runners.get(server)
        return runner.tools() if runner is not None else []

    def source(self, server: str) -> str:
        """A hash of what the server runs (its command and arguments, or its URL), part of
        its tools' origins (:mod:`bothost.rules.origin`); "" for no such server."""
        runner = self.runners.get(server)
        if runner is None:
            return ""
        config = runner.config
        return server_source(config.command, config.args, config.url)

    def description(self, server: str) -> tuple[str, bool]:
        """The server's line for the agent's groups table, and whether a third party wrote it:
        ``mcp install`` takes the package's own description and ``register_mcp`` the model's,
        while the config file, ``mcp add`` and ``mcp import`` are the operator's words."""
        runner = self.runners.get(server)
        if runner is None:
            return "", False
        return runner.config.description, self.added_by.get(server) in THIRD_PARTY_ORIGINS

    def instructions(self, server: str) -> str:
        """What the server's ``initialize`` said about using it; "" unless it is ready."""
        runner = self.runners.get(server)
        return runner.instructions() if runner is not None else ""

    def capabilities(self, server: str) -> dict[str, Any]:
        """What the server declared at ``initialize`` (``resources``, ``prompts``…); {} unless
        it is ready."""
        runner = self.runners.get(server)
        return runner.capabilities() if runner is not None else {}

    async def list_resources(self, server: str) -> CallResult:
        """The server's resources and resource templates as text; failures are results."""
        runner = self.runners.get(server)
        if runner is None:
            return CallResult.failure(f"no MCP server named {server!r}")
        await self.settle({server})  # it may still be starting
        try:
            return concealed.result(await resources.listing_text(runner, server))
        except McpError as exc:
            return CallResult.failure(f"listing the resources of {server} failed: {exc.message}")

    async def read_resource(self, server: str, uri: str) -> CallResult:
        """One resource: text as text, binary saved under media/; failures are results."""
        runner = self.runners.get(server)
        if runner is None:
            return CallResult.failure(f"no MCP server named {server!r}")
        await self.settle({server})  # it may still be starting
        try:
            answer = await runner.request("resources/read", {"uri": uri})
        except McpError as exc:
            return CallResult.failure(f"reading {uri} from {server} failed: {exc.message}")
        return concealed.result(resources.read_result(answer, self.home / "media"))

    async def prompt_servers(self) -> list[str]:
        """The ready servers that declare the ``prompts`` capability, by name (servers still
        starting are waited for as a turn waits for them: ``settle``)."""
        await self.settle(set(self.runners))
        return sorted(name for name in self.runners if "prompts" in self.capabilities(name))

    def starting(self) -> list[str]:
        """The servers still starting (past a settle's grace: their prompts are not known)."""
        return sorted(name for name, r in self.runners.items() if r.state == "starting")

    async def list_prompts(self, server: str) -> list[prompts.Prompt]:
        """The server's prompts; McpManagerError with a message for people when it fails."""
        runner = self.runners.get(server)
        if runner is None:
            raise McpNotFoundError(f"no MCP server named {server!r}")
        await self.settle({server})  # it may still be starting
        try:
            found, _cut = await prompts.list_prompts(runner)
        except McpError as exc:
            raise McpManagerError(
                f"listing the prompts of {server} failed: {exc.message}"
            ) from None
        return found

    async def complete_argument(
        self, server: str, prompt: str, argument: str, value: str, given: dict[str, str]
    ) -> list[str]:
        """What `server` suggests for `argument` of `prompt` typed so far as `value`
        (``completion/complete``; `given`: the arguments typed before it). [] for a server
        that does not declare ``completions``, or whose answer fails or comes late."""
        runner = self.runners.get(server)
        if runner is None or "completions" not in self.capabilities(server):
            return []
        params: dict[str, Any] = {
            "ref": {"type": "ref/prompt", "name": prompt},
            "argument": {"name": argument, "value": value},
        }
        if given:
            params["context"] = {"arguments": given}
        try:
            async with asyncio.timeout(COMPLETE_WAIT):
                answer = await runner.request("completion/complete", params)
        except (McpError, TimeoutError) as exc:
            why = exc.message if isinstance(exc, McpError) else f"no answer in {COMPLETE_WAIT:g} s"
            logger.info("completing %s/%s %s failed: %s", server, prompt, argument, why)
            return []
        completion = answer.get("completion")
        values = completion.get("values") if isinstance(completion, dict) else None
        return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []

    async def get_prompt(self, server: str, name: str, arguments: dict[str, str]) -> str:
        """One prompt rendered as text (binary parts saved under media/); McpManagerError."""
        runner = self.runners.get(server)
        if runner is None:
            raise McpNotFoundError(f"no MCP server named {server!r}")
        await self.settle({server})  # it may still be starting
        try:
            answer = await runner.request("prompts/get", {"name": name, "arguments": arguments})
        except McpError as exc:
            raise McpManagerError(f"{server}/{name} failed: {exc.message}") from None
        return concealed.text(prompts.render(answer, self.home / "media"))

    async def call_tool(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any] | None = None,
        timeout: float | None = None,
        on_progress: Callable[..., Any] | None = None,
        ask: Asker | Ask | None = None,
    ) -> CallResult:
        """Call a tool; every failure is an error result (unknown server, not running, …)."""
        runner = self.runners.get(server)
        if runner is None:
            return CallResult.failure(f"no MCP server named {server!r}")
        if self.on_demand:  # started now if it was not: waited for as a turn waits
            await self.settle({server})
        # every output of a server is masked here, not only what a turn shows (issue 34:
        # `mcp call` printed an echoed ${env:…} value)
        return concealed.result(await runner.call_tool(tool, arguments, timeout, on_progress, ask))

    # -- run-time changes ----------------------------------------------------------------

    async def add_server(
        self, name: str, config: McpServerConfig, origin: str = "cli"
    ) -> ServerStatus:
        """Add (or replace) a server in the table and start it if enabled."""
        problem = roster.name_problem(name)
        if problem:
            raise McpManagerError(problem)
        if bool(config.command) == bool(config.url):
            raise McpManagerError(f"{name}: give exactly one of a command (stdio) or a URL")
        wrong = timeout_problem(config)
        if wrong:
            raise McpManagerError(f"{name}: max_timeout: {wrong}")
        wrong = address_problem(config) or environment.config_problem(config)
        if wrong:
            raise McpManagerError(f"{name}: {wrong}")
        for i, root in enumerate(config.roots):  # the rule config's roots are held to
            wrong = roots.problem(root)
            if wrong:
                raise McpManagerError(f"{name}: roots[{i}]: {wrong}")
        await self.store.run(lambda db: stored.save(db, name, config, origin))
        self._demanded.add(name)  # on demand too: whoever adds it wants to know it starts
        await self.reload()
        return self._status_of(name, shadowed=name in self.shadowed)

    async def remove_server(self, name: str) -> None:
        rows = await self.store.run(stored.load)
        row = rows.get(name)
        if row is None or row.origin == stored.OVERRIDE:
            if name in self.config_servers:
                raise McpManagerError(
                    f"{name} is defined in the config file; remove it there, "
                    f"or `bothost mcp disable {name}`"
                )
            raise McpNotFoundError(f"no MCP server named {name!r}")
        await self.store.run(lambda db: stored.delete(db, name))
        await self.reload()

    async def set_enabled(self, name: str, enabled: bool) -> ServerStatus:
        rows = await self.store.run(stored.load)
        if name in self.config_servers:
            if name in rows and rows[name].origin != stored.OVERRIDE:
                raise McpManagerError(
                    f"a stored server {name} is shadowed by the config server "
                    f"of that name; `bothost mcp remove {name}` first"
                )
            await self.store.run(lambda db: stored.set_override(db, name, enabled))
        elif name in rows:
            await self.store.run(lambda db: stored.set_enabled(db, name, enabled))
        else:
            raise McpNotFoundError(f"no MCP server named {name!r}")
        self._demanded.add(name)  # as for add_server
        await self.reload()
        return self._status_of(name)

    def _status_of(self, name: str, shadowed: bool = False) -> ServerStatus:
        return next(
            s for s in self.status() if s.name == name and (s.state == "shadowed") == shadowed
        )
