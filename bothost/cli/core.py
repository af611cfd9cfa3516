"""The core commands: run, chat, plugins, install, uninstall, config show, doctor, docs."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict
from typing import Any

import click

from bothost import jsondecode
from bothost.cli import manual
from bothost.cli.runtime import Runtime
from bothost.config import mask_secrets
from bothost.config.check import check_serving
from bothost.hooks import packages
from bothost.hooks.discovery import PluginInfo
from bothost.llm.base import key_problem
from bothost.mcp import roster, stored
from bothost.store.corruption import START_CHECK_SECONDS

pass_runtime = click.make_pass_decorator(Runtime)


@click.command()
@click.pass_context
def run(ctx: click.Context) -> None:
    """Start everything configured and stay up until interrupted.

    Serves the web chat and API (http:, default http://127.0.0.1:8765/), Slack and
    the terminal when configured, the MCP servers and the tick. Ctrl-C (or SIGTERM) stops it.

    \b
    Example:
      bothost run
      bothost --config prod.yaml run

    Exit status: 0 after a clean stop; 1 if it cannot start (port in use, database held
    by another host, …: the one line says which); 2 for a config or plugin error.
    """
    from bothost.host.serve import serve

    runtime = ctx.find_object(Runtime)
    assert runtime is not None, "the bothost group puts a Runtime on the context"
    verbose = ctx.parent.params.get("verbose", 0) if ctx.parent else 0
    check_serving(runtime.config)  # before the store opens: a config error writes nothing
    if (problem := key_problem(runtime.config.llm)) is not None:
        # it still serves (commands, tools, the tick's rules need no model); found from
        # outside: without this line the first reply in the web chat was the first word of it
        click.echo(
            f"bothost: {problem}; until then every turn fails (check: bothost doctor)", err=True
        )
    # a host serves for days: its start may check the database file's pages for longer
    sys.exit(runtime.run(serve(runtime.host(check_within=START_CHECK_SECONDS), verbose)))


@click.command(short_help="Talk to the agent in the terminal.")
@click.option("-m", "--message", help="Send one message; the reply goes to stdout.")
@click.option("--new", "fresh", is_flag=True, help="Start a fresh conversation first (as /new).")
@pass_runtime
def chat(runtime: Runtime, message: str | None, fresh: bool) -> None:
    """Talk to the agent in the terminal (a prompt; Ctrl-D ends it), or send one message.

    \b
    Examples:
      bothost chat
      bothost chat -m help
      bothost chat -m "what is the weather in Zurich?"
      bothost chat --new        (the model reads nothing said before; /new does it too)

    Exit status: 0 when the agent replied (a tool's error is part of the reply); 1 when
    the turn failed (the model was not reached or gave no answer) or a usage budget
    refused it, or at once when a hosted model has no key.
    """
    from bothost.host.serve import chat as chat_loop

    if (problem := key_problem(runtime.config.llm)) is not None:  # before the provider and host
        click.echo(f"bothost: {problem}", err=True)
        sys.exit(1)
    if message is not None:
        try:  # bytes that are not UTF-8 arrive as lone surrogates (surrogateescape)
            jsondecode.check_text(message, "the message")
        except jsondecode.JsonInputError as exc:
            raise click.BadParameter(str(exc), param_hint="-m") from None
    sys.exit(runtime.run(chat_loop(runtime.host(), message, runtime.verbose, fresh)))


@click.command(short_help="Every plugin found, its origin and its hooks.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_runtime
def plugins(runtime: Runtime, as_json: bool) -> None:
    """List every plugin found, its origin and its hooks (MCP servers as mcp:NAME)."""
    infos = runtime.plugins + mcp_plugins(runtime)
    if as_json:
        click.echo(json.dumps([asdict(i) for i in infos], indent=2))
        return
    for info in infos:
        state = "disabled" if info.disabled else (f"error: {info.error}" if info.error else "ok")
        click.echo(f"{info.name:16} {info.origin:28} {state}")
        if info.hooks:
            click.echo(f"{'':16} hooks: {', '.join(info.hooks)}")


def mcp_plugins(runtime: Runtime) -> list[PluginInfo]:
    """The MCP servers on the roster, as ``mcp:NAME`` (origin ``mcp:<who added it>``)."""
    rows = runtime.stored.call(stored.load) if runtime.has_home() else {}  # none added yet
    servers = roster.desired_servers(runtime.config.mcp.servers, rows).servers
    return [
        PluginInfo(name=s.plugin, origin=f"mcp:{s.added_by}", disabled=not s.config.enabled)
        for _, s in sorted(servers.items())
    ]


@click.command(short_help="Install a plugin package with pip.")
@click.argument("package")
@click.option("-v", "--verbose", is_flag=True, help="Show pip's own output as it runs.")
@click.pass_context
def install(ctx: click.Context, package: str, verbose: bool) -> None:
    """Install a plugin package into bothost's own Python environment, with pip.

    PACKAGE is anything pip accepts: a name on PyPI, NAME==VERSION, a wheel, a folder or a
    URL. One line per package installed says its version, where it went and the bothost
    plugins it brings; pip's own output is shown only if pip fails (or with -v).
    Restart `bothost run` to load a new plugin.

    \b
    Example:
      bothost install bothost-demo

    Exit status: 0 installed, else pip's (the failing command is printed to rerun).
    """
    refuse_without_pip("install", package)
    result = packages.install(package, verbose or bool(global_verbose(ctx)))
    if result.status == 0 and not result.packages:
        name = requirement_name(package)
        found = packages.distribution(name) if name else None
        if found is None:
            click.echo(f"nothing to install: pip found {package} already installed")
        else:
            click.echo(packages.of(found).line("already installed:"))
    finish(result, "installed", verbose or bool(global_verbose(ctx)))
    requested = [p for p in result.packages if p.requested and not p.plugins]
    for package_ in requested:
        click.echo(
            f"note: {package_.name} brings no bothost plugin (no entry point in the group "
            "`bothost`; see `bothost docs plugins`)",
            err=True,
        )


@click.command(short_help="Remove a plugin package with pip.")
@click.argument("package")
@click.option("-v", "--verbose", is_flag=True, help="Show pip's own output as it runs.")
@click.pass_context
def uninstall(ctx: click.Context, package: str, verbose: bool) -> None:
    """Remove a plugin package from bothost's Python environment, with pip.

    \b
    Example:
      bothost uninstall bothost-demo

    Exit status: 0 removed (or not installed), else pip's.
    """
    refuse_without_pip("uninstall", package)
    result = packages.uninstall(package, verbose or bool(global_verbose(ctx)))
    if result.status == 0 and not result.packages:
        click.echo(f"{package} is not installed in {sys.prefix}")
    finish(result, "removed", verbose or bool(global_verbose(ctx)))


def refuse_without_pip(command: str, package: str) -> None:
    """Exit 1 with what to do instead when bothost's environment has no pip."""
    if (instead := packages.no_pip(command, package)) is not None:
        click.echo(f"bothost: {instead}", err=True)
        sys.exit(1)


def global_verbose(ctx: click.Context) -> int:
    """``bothost -v …``: the group's option, before the command."""
    return int(ctx.parent.params.get("verbose", 0)) if ctx.parent else 0


def requirement_name(spec: str) -> str:
    """The distribution name a requirement like ``name[extra]>=1`` starts with ('' if a path)."""
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", spec.strip())
    if match is None or "/" in spec or spec.endswith((".whl", ".tar.gz", ".zip")):
        return ""
    return match.group(0)


def finish(result: Any, verb: str, verbose: bool) -> None:
    """One line per package; pip's output and the command to rerun if it failed."""
    if result.status != 0:
        if not verbose and result.output:
            click.echo(result.output.rstrip(), err=True)
        click.echo(
            f"bothost: pip failed (exit status {result.status}); to retry: {result.rerun}",
            err=True,
        )
        sys.exit(result.status)
    for package in result.packages:
        click.echo(package.line(verb))


@click.group()
def config() -> None:
    """Inspect the configuration."""


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_runtime
def config_show(runtime: Runtime, as_json: bool) -> None:
    """Print the effective config (all sources merged) with secrets masked.

    Loading it checks every file: a wrong key or value is one line naming the file and
    key path, with exit status 2.

    \b
    Example:
      bothost --config bothost.yaml config show
    """
    masked = mask_secrets(runtime.config.raw, config=runtime.config)
    if as_json:
        click.echo(json.dumps(masked, indent=2))
    else:
        click.echo("# sources: " + ", ".join(runtime.config.sources))
        import yaml  # `config show` only: the other commands read no YAML of their own

        click.echo(yaml.safe_dump(masked, sort_keys=False).rstrip())


@click.command(short_help="Say what is wrong and how to fix it.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--offline", is_flag=True, help="Do not contact the model or Slack.")
@pass_runtime
def doctor(runtime: Runtime, as_json: bool, offline: bool) -> None:
    """Say what is wrong and how to fix it: config, home, database, web port, model, MCP
    commands and plugins.

    \b
    Example:
      bothost doctor
      bothost doctor --offline --json

    Exit status: 0 if every check is ok, 1 if any is not; 2 for a config error (its one
    line names the file and key path: no check runs on a config that does not load).
    """
    from bothost.host.doctor import Finding, diagnose

    def show(f: Finding) -> None:  # each line as soon as its check knows it
        click.echo(f"{'ok ' if f.ok else '!! '} {f.check}: {f.detail}")
        if not f.ok and f.fix:
            click.echo(f"    fix: {f.fix}")

    def say(line: str) -> None:  # a check that is slow to answer: what doctor waits for
        click.echo(line, err=True)

    findings = diagnose(runtime, offline, (lambda f: None) if as_json else show, say)
    if as_json:
        click.echo(json.dumps([asdict(f) for f in findings], indent=2))
    sys.exit(0 if all(f.ok for f in findings) else 1)


@click.command(short_help="Read the documentation installed with bothost.")
@click.argument("topic", required=False)
def docs(topic: str | None) -> None:
    """Print a page of the documentation installed with bothost; list them without TOPIC.

    \b
    Examples:
      bothost docs              the topics, one line each
      bothost docs llm          connect a language model
      bothost docs plugins | less

    Exit status: 0, or 1 for a topic with no page.
    """
    if topic is None:
        listed = manual.topics()
        width = max(len(item.name) for item in listed) + 2
        for item in listed:
            click.echo(f"{item.name:{width}}{item.title}")
        return
    try:
        text = manual.read(topic)
    except manual.UnknownTopicError as exc:
        click.echo(f"bothost: {exc}", err=True)
        sys.exit(1)
    click.echo(text, nl=False)


COMMANDS = [run, chat, plugins, install, uninstall, config, doctor, docs]
