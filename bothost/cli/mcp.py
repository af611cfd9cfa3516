"""``bothost mcp …``: list, inspect, call and change MCP servers from the command line.

Thin commands over :mod:`bothost.mcp.commands`. ``call``, ``tools``, ``resources`` and
``read`` start the servers
they need themselves (a private manager for the length of the command) and record the
``event/*`` notifications those servers push meanwhile, like the host does. ``add``,
``enable``, ``disable`` and ``remove`` write to the ``mcp_servers`` table; a running host
applies them within seconds.
"""

from __future__ import annotations

import getpass
import json
import sys
from typing import Any

import click

from bothost.cli.runtime import COUNT, Runtime, Seconds
from bothost.config import McpServerConfig
from bothost.mcp import commands, stored
from bothost.mcp.manager import McpManagerError, McpNotFoundError, McpUnreachableError
from bothost.platform import Question, in_daemon_thread, terminal_input

pass_runtime = click.make_pass_decorator(Runtime)
USAGE_EXIT = 2
CALL_FAILED_EXIT = 1


def fail(message: str, code: int = USAGE_EXIT) -> None:
    click.echo(f"bothost: {message}", err=True)
    sys.exit(code)


def manager(runtime: Runtime, on_events: Any = None, store: Any = None) -> Any:
    """A private manager; ``on_events`` (from ``runtime.recording_events``) records what its
    servers push; ``store``: the one to read (``runtime.stored`` for a listing)."""
    ask = terminal_ask if sys.stdin.isatty() else None
    return commands.manager_for(
        runtime.config, store or runtime.store, runtime.home, ask=ask, on_events=on_events
    )


async def terminal_ask(question: Question) -> dict[str, Any] | None:
    """Answer a server's elicitation at the terminal (only when stdin is one)."""

    def prompt() -> dict[str, Any] | None:
        click.echo(question.text, err=True)
        if not confirm("Answer? [Y/n]: "):
            return None
        values = {}
        for key, spec in (question.schema.get("properties") or {}).items():
            kind = {"integer": int, "number": float, "boolean": bool}.get(spec.get("type"), str)
            values[key] = ask_value(spec.get("title") or key, spec.get("default"), kind, question)
        return values

    return await in_daemon_thread(prompt)  # not an executor thread: Ctrl-C must not wait


# The prompts read stdin with terminal_input, not click.prompt's input(): with the command's
# stdout redirected that holds stdin's buffer lock, and Ctrl-C at the prompt aborted the
# process (SIGABRT) instead of ending it (see bothost.platform.terminal_input).


def confirm(text: str) -> bool:
    """Yes (the default) or no, asked until the answer is one of them."""
    while True:
        answer = terminal_input(text, err=True).strip().lower()
        if answer in ("", "y", "yes"):
            return True
        if answer in ("n", "no"):
            return False
        click.echo("Error: invalid input", err=True)


def ask_value(label: str, default: Any, kind: type, question: Question) -> Any:
    """One field of a form: converted to ``kind``, asked again until it converts."""
    shown = (
        f"{label} [{default}]: " if default is not None and not question.secret else f"{label}: "
    )
    while True:
        if question.secret:  # getpass reads the terminal itself (/dev/tty), not stdin
            raw = getpass.getpass(shown, stream=sys.stderr)
        else:
            raw = terminal_input(shown, err=True)
        if raw == "" and default is not None:
            return default
        try:
            return click.types.convert_type(kind).convert(raw, None, None)
        except click.BadParameter as exc:
            click.echo(f"Error: {exc.message}", err=True)


def run(runtime: Runtime, coro: Any) -> Any:
    try:
        return runtime.run(coro)
    except (McpNotFoundError, McpUnreachableError) as exc:  # a "no" or a failure, not usage
        fail(str(exc), CALL_FAILED_EXIT)
    except McpManagerError as exc:
        fail(str(exc))


@click.group("mcp", short_help="MCP servers: list, add, call, logs, enable, …")
def mcp_group() -> None:
    """MCP servers: list, tools, call, resources, read, logs, add, enable, disable, remove,
    login, logout."""


@mcp_group.command("list")
@click.option("--check", is_flag=True, help="Start every enabled server now and report.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_runtime
def list_command(runtime: Runtime, check: bool, as_json: bool) -> None:
    """Every server from config and the table, with its state.

    Exit status: 0; with --check, 1 when an enabled server is not ready (failed, still
    starting, or waiting for a login)."""
    # listing reads the table: no home is created for it, and a read-only one is read
    store = runtime.store if check else runtime.stored
    statuses = run(runtime, commands.list_servers(manager(runtime, store=store), check))
    if as_json:
        click.echo(json.dumps([s.to_dict() for s in statuses], indent=2))
    else:
        print_listing(statuses)
    if check and commands.not_ready(statuses):
        sys.exit(CALL_FAILED_EXIT)


def print_listing(statuses: list[commands.ServerStatus]) -> None:
    if not statuses:
        click.echo("No MCP servers configured.")
    for s in statuses:
        tools = f"{s.tools} tools" if s.state == "ready" else ""
        click.echo(
            f"{s.name:16} {s.origin:6} {s.state:12} {tools:9} {s.transport:5} {s.target}".rstrip()
        )
        for extra in (s.error, s.note, restarted(s), renewed(s)):
            if extra:
                click.echo(f"{'':16} {extra}")


def renewed(status: commands.ServerStatus) -> str:
    """How often the server forgot our session (it restarted) and a new one was made: the
    server is ``ready`` before and after, so without this line nobody would know."""
    n = status.renewals or 0
    if not n:
        return ""
    times = "once" if n == 1 else f"{n} times"
    return f"session renewed {times}: the server forgot it (restarted?), its push stream reopened"


def restarted(status: commands.ServerStatus) -> str:
    """How often a running host restarted the server: a crash loop is ``ready`` between its
    deaths, and its error is gone then, so without this line it would look well."""
    n = status.restarts or 0
    if not n:
        return ""
    times = "once" if n == 1 else f"{n} times"
    return f"restarted {times} (why: bothost mcp logs {status.name})"


@mcp_group.command("tools")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="The raw MCP tool definitions.")
@pass_runtime
def tools_command(runtime: Runtime, name: str | None, as_json: bool) -> None:
    """The tools of one server (or of every enabled server), starting them to ask.

    \b
    Example:
      bothost mcp tools weather
    """

    async def collect() -> dict[str, Any]:
        async with runtime.recording_events() as on_events:
            mgr = manager(runtime, on_events)
            await mgr.reload()
            names = {name} if name else commands.enabled_names(mgr)
            async with commands.private(mgr, names):
                return {
                    n: {
                        "status": next(
                            s for s in mgr.status() if s.name == n and s.state != "shadowed"
                        ),
                        "tools": mgr.tools(n),
                    }
                    for n in sorted(names)
                }

    found = run(runtime, collect())
    if as_json:
        click.echo(json.dumps({n: v["tools"] for n, v in found.items()}, indent=2))
    rows = []
    for server, entry in found.items():
        status = entry["status"]
        if status.state != "ready":
            why = f": {status.error}" if status.error else ""
            click.echo(f"bothost: {server}: {status.state}{why}", err=True)
        for tool in entry["tools"]:
            described = tool.get("description")  # the server's: not always a string
            lines = (described if isinstance(described, str) else "").strip().splitlines()
            rows.append((f"{server}/{tool['name']}", lines[0][:90] if lines else ""))
    # one column for every server's tools, as wide as the longest name
    width = max((len(label) for label, _ in rows), default=0)
    for label, summary in [] if as_json else rows:
        click.echo(f"{label:{width}}  {summary}".rstrip())
    if any(v["status"].state != "ready" for v in found.values()):
        sys.exit(CALL_FAILED_EXIT)


@mcp_group.command("call")
@click.argument("name")
@click.argument("tool")
@click.argument("arguments", required=False, default="{}")
@click.option(
    "--timeout",
    type=Seconds(),
    help="Seconds for the whole call, starting the server included (default: 60 s to start, "
    "then the server's timeout).",
)
@click.option("--json", "as_json", is_flag=True, help="The whole result as JSON.")
@pass_runtime
def call_command(
    runtime: Runtime, name: str, tool: str, arguments: str, timeout: float | None, as_json: bool
) -> None:
    """Call TOOL of server NAME with ARGUMENTS (a JSON object).

    \b
    Example:
      bothost mcp call weather forecast '{"location": "Bern"}'

    Exit status: 0; 1 when the call failed (the tool's error is printed) or there is no
    server NAME; 2 for ARGUMENTS that are not a JSON object.
    """
    try:
        parsed = json.loads(arguments)
    except ValueError as exc:
        fail(f"ARGUMENTS is not JSON: {exc}")
    if not isinstance(parsed, dict):
        fail("ARGUMENTS must be a JSON object")

    def progress(done: Any, total: Any, message: Any) -> None:
        count = (
            "" if done is None else f"{done}{f'/{total}' if total else ''} "
        )  # a task's status has none
        click.echo(f"… {count}{message or ''}".rstrip(), err=True)

    async def call() -> tuple[Any, Exception | None]:
        async with runtime.recording_events() as recorder:
            result = await commands.call_tool(
                manager(runtime, recorder), name, tool, parsed, timeout, progress
            )
            return result, recorder.error()  # once the server stopped: all it pushed is in

    result, lost = run(runtime, call())
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        click.echo(result.text)
        if result.for_user:  # the person at the terminal is the user it was meant for
            click.echo(result.for_user)
        for path in result.media:  # the text names the web app's /media/<file>: say the file
            click.echo(f"saved {path}", err=True)
    if lost is not None:  # the tool ran; what the server pushed meanwhile was not kept
        raise lost
    if result.is_error:
        sys.exit(CALL_FAILED_EXIT)


@mcp_group.command("resources")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="The resources and templates as listed.")
@pass_runtime
def resources_command(runtime: Runtime, name: str, as_json: bool) -> None:
    """The resources and resource templates of server NAME, starting it to ask.

    \b
    Example:
      bothost mcp resources files

    Exit status: 0; 1 when the server is not ready, the listing failed, or there is no
    server NAME.
    """

    async def collect() -> dict[str, Any]:
        async with runtime.recording_events() as on_events:
            return await commands.list_resources(manager(runtime, on_events), name)

    found = run(runtime, collect())
    if as_json:
        shown = {k: found[k] for k in ("resources", "resourceTemplates")}
        click.echo(json.dumps(shown, indent=2, ensure_ascii=False))
    else:
        click.echo(found["text"])


@mcp_group.command("read")
@click.argument("name")
@click.argument("uri")
@click.option("--json", "as_json", is_flag=True, help="The resources/read result as sent.")
@pass_runtime
def read_command(runtime: Runtime, name: str, uri: str, as_json: bool) -> None:
    """Read resource URI of server NAME, starting it to ask.

    \b
    Example:
      bothost mcp read files file:///srv/share/todo.md

    Text is printed as text; a binary part is saved under media/ (its path on stderr).
    Exit status: 0; 1 when the server is not ready, the read failed, or there is no server
    NAME.
    """

    async def read() -> dict[str, Any]:
        async with runtime.recording_events() as on_events:
            return await commands.read_resource(manager(runtime, on_events), name, uri)

    answer = run(runtime, read())
    if as_json:
        click.echo(json.dumps(answer, indent=2, ensure_ascii=False))
        return
    result = commands.read_text(answer, runtime.home)
    click.echo(result.text)
    for path in result.media:
        click.echo(f"saved {path}", err=True)


@mcp_group.command("logs")
@click.argument("name")
@click.option("-n", "--lines", type=COUNT, default=50, show_default=True, help="How many lines.")
@pass_runtime
def logs_command(runtime: Runtime, name: str, lines: int) -> None:
    """The end of server NAME's log (stderr, log messages, starts and exits)."""
    try:
        for line in commands.tail_log(runtime.home, name, lines):
            click.echo(line)
    except McpManagerError as exc:
        fail(str(exc), CALL_FAILED_EXIT)


def checked_duration(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Any:
    """A server timeout option checked before anything starts: a usage error (exit 2)."""
    if value is not None:
        _, wrong = commands.checked_duration(value)
        if wrong:
            raise click.BadParameter(f"{wrong}, got {value!r}")
    return value


@mcp_group.command("add")
@click.argument("name")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--url", help="A Streamable HTTP endpoint instead of a command.")
@click.option("--header", "headers", multiple=True, help="K=V (values may use ${env:NAME}).")
@click.option("--env", "env", multiple=True, help="K=V for the server's environment.")
@click.option("--description", default="", help="One line for the agent's server table.")
@click.option(
    "--timeout",
    callback=checked_duration,
    help="How long a call may go without news (90, 90s, 2m; default 60s; at most 1d).",
)
@click.option(
    "--max-timeout",
    callback=checked_duration,
    help="How long progress may keep a call going (default 10m; at most 1d).",
)
@click.option("--disabled", is_flag=True, help="Add it without starting it.")
@click.option(
    "--root",
    "roots",
    multiple=True,
    help="A directory the server is told to work in (MCP roots; absolute or ~/…; repeat).",
)
@click.option(
    "--singleton/--everywhere",
    default=None,
    help="Run it on the leader host only (a server that pushes events), or on every host "
    "(default: the leader only for the bundled watchers).",
)
@pass_runtime
def add_command(
    runtime: Runtime,
    name: str,
    command: tuple[str, ...],
    url: str | None,
    headers: tuple[str, ...],
    env: tuple[str, ...],
    description: str,
    timeout: str | None,
    max_timeout: str | None,
    disabled: bool,
    roots: tuple[str, ...],
    singleton: bool | None,
) -> None:
    """Add server NAME: `add NAME -- CMD ARGS…` or `add NAME --url URL`.

    \b
    Examples:
      bothost mcp add time -- uvx mcp-server-time
      bothost mcp add docs --url https://host/mcp --header 'Authorization=Bearer ${env:TOKEN}'
    """

    async def add() -> tuple[Any, list[str] | None]:
        mgr = manager(runtime)
        if name in mgr.config_servers:  # a row it would hide at once; `mcp import` skips it
            raise McpManagerError(
                f"a server named {name!r} exists (the config file): give this one another "
                f"name, or change mcp.servers.{name} in the config file; nothing was added"
            )
        before = (await mgr.store.run(stored.load)).get(name)
        config = commands.new_config(
            command,
            url,
            commands.pairs(headers, "--header"),
            commands.pairs(env, "--env"),
            description,
            timeout,
            not disabled,
            max_timeout,
            singleton,
            list(roots),
        )
        status = await mgr.add_server(name, config, origin="cli")
        if before is None or before.origin == stored.OVERRIDE:  # an override is no server
            return status, None
        return status, lost_settings(before.config, config)

    status, lost = run(runtime, add())
    if lost is None:
        click.echo(f"added {name} ({status.transport}: {status.target})")
    else:  # adding again is how a stored server is changed (docs/mcp.md): say so
        dropped = f"; not kept: {', '.join(lost)}" if lost else ""
        click.echo(f"replaced {name} ({status.transport}: {status.target}){dropped}")


def lost_settings(old: McpServerConfig, new: McpServerConfig) -> list[str]:
    """The settings the replaced entry had that the new one leaves out (names only: values
    may be secrets)."""
    keys = ("args", "env", "headers", "roots", "description", "env_passthrough", "tools")
    return [key for key in keys if getattr(old, key) and not getattr(new, key)]


def _toggle(runtime: Runtime, name: str, enabled: bool) -> None:
    status = run(runtime, manager(runtime).set_enabled(name, enabled))
    click.echo(f"{name} {'enabled' if status.enabled else 'disabled'}")


@mcp_group.command("enable")
@click.argument("name")
@pass_runtime
def enable_command(runtime: Runtime, name: str) -> None:
    """Enable server NAME (a running host starts it within seconds)."""
    _toggle(runtime, name, True)


@mcp_group.command("disable")
@click.argument("name")
@pass_runtime
def disable_command(runtime: Runtime, name: str) -> None:
    """Disable server NAME (a running host stops it within seconds)."""
    _toggle(runtime, name, False)


@mcp_group.command("remove")
@click.argument("name")
@pass_runtime
def remove_command(runtime: Runtime, name: str) -> None:
    """Remove server NAME from the table (config servers are removed in the config file)."""
    run(runtime, manager(runtime).remove_server(name))
    click.echo(f"removed {name}")


@mcp_group.command("login")
@click.argument("name")
@pass_runtime
def login_command(runtime: Runtime, name: str) -> None:
    """Log in to remote server NAME (OAuth): prints the URL to open, then waits for it."""

    def say(url: str) -> None:
        click.echo(f"Open this URL to log in to {name}:\n{url}")
        sys.stdout.flush()  # a script reading our output needs the URL while we wait

    web = getattr(getattr(runtime.config, "platforms", None), "web", None)
    click.echo(run(runtime, commands.login(manager(runtime), name, web, say)))


@mcp_group.command("logout")
@click.argument("name")
@pass_runtime
def logout_command(runtime: Runtime, name: str) -> None:
    """Forget remote server NAME's OAuth tokens (it needs `bothost mcp login` again)."""
    run(runtime, commands.logout(manager(runtime), name))
    click.echo(f"logged out of {name}")
