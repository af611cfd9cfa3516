"""The core commands: run, chat, plugins, install, uninstall, config show, doctor."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict

import click
import yaml

from bothost import jsondecode
from bothost.cli.runtime import Runtime
from bothost.config import mask_secrets
from bothost.discovery import PluginInfo

pass_runtime = click.make_pass_decorator(Runtime)


@click.command()
@click.pass_context
def run(ctx: click.Context) -> None:
    """Start everything configured and stay up until interrupted."""
    from bothost.serve import serve

    runtime = ctx.find_object(Runtime)
    assert runtime is not None, "the bothost group puts a Runtime on the context"
    verbose = ctx.parent.params.get("verbose", 0) if ctx.parent else 0
    sys.exit(runtime.run(serve(runtime.host(), verbose)))


@click.command()
@click.option("-m", "--message", help="Send one message; the reply goes to stdout.")
@pass_runtime
def chat(runtime: Runtime, message: str | None) -> None:
    """Talk to the agent in the terminal."""
    from bothost.serve import chat as chat_loop

    if message is not None:
        try:  # bytes that are not UTF-8 arrive as lone surrogates (surrogateescape)
            jsondecode.check_text(message, "the message")
        except jsondecode.JsonInputError as exc:
            raise click.BadParameter(str(exc), param_hint="-m") from None
    sys.exit(runtime.run(chat_loop(runtime.host(), message)))


@click.command()
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
    from bothost.mcp import roster, stored

    rows = runtime.store.call(stored.load)
    servers = roster.desired_servers(runtime.config.mcp.servers, rows).servers
    return [
        PluginInfo(name=s.plugin, origin=f"mcp:{s.added_by}", disabled=not s.config.enabled)
        for _, s in sorted(servers.items())
    ]


def pip(*args: str) -> None:
    command = [sys.executable, "-m", "pip", *args]
    click.echo("$ " + " ".join(command), err=True)
    sys.exit(subprocess.call(command))


@click.command()
@click.argument("package")
def install(package: str) -> None:
    """Install a plugin package into bothost's own Python environment (pip)."""
    pip("install", package)


@click.command()
@click.argument("package")
def uninstall(package: str) -> None:
    """Remove a plugin package from bothost's Python environment (pip)."""
    pip("uninstall", "-y", package)


@click.group()
def config() -> None:
    """Inspect the configuration."""


@config.command("show")
@click.option("--json", "as_json", is_flag=True)
@pass_runtime
def config_show(runtime: Runtime, as_json: bool) -> None:
    """Print the effective config (all sources merged) with secrets masked."""
    masked = mask_secrets(runtime.config.raw, config=runtime.config)
    if as_json:
        click.echo(json.dumps(masked, indent=2))
    else:
        click.echo("# sources: " + ", ".join(runtime.config.sources))
        click.echo(yaml.safe_dump(masked, sort_keys=False).rstrip())


@click.command()
@click.option("--json", "as_json", is_flag=True)
@click.option("--offline", is_flag=True, help="Do not contact the model or Slack.")
@pass_runtime
def doctor(runtime: Runtime, as_json: bool, offline: bool) -> None:
    """Say what is wrong and how to fix it; exit non-zero if anything is."""
    from bothost.doctor import diagnose

    findings = diagnose(runtime, offline=offline)
    if as_json:
        click.echo(json.dumps([asdict(f) for f in findings], indent=2))
    else:
        for f in findings:
            mark = "ok " if f.ok else "!! "
            click.echo(f"{mark} {f.check}: {f.detail}")
            if not f.ok and f.fix:
                click.echo(f"    fix: {f.fix}")
    sys.exit(0 if all(f.ok for f in findings) else 1)


COMMANDS = [run, chat, plugins, install, uninstall, config, doctor]
