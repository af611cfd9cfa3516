"""``bothost mcp install``, ``import`` and ``search``: new servers from packages, files and
the MCP registry.

Thin commands on the ``mcp`` group over :mod:`bothost.mcp.install`,
:mod:`bothost.mcp.importer` and :mod:`bothost.mcp.registry`. Install progress (a line per
step; with ``-v`` each pip or npm output line, prefixed) goes to stderr, so stdout holds
only the result (or JSON with ``--json``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from bothost.cli.mcp import fail, manager, mcp_group, pass_runtime
from bothost.cli.runtime import Runtime
from bothost.mcp import commands
from bothost.mcp.importer import ImportFileError, import_file
from bothost.mcp.install import (
    InstallError,
    PackageSpecError,
    Progress,
    install_server,
    parse_package,
    quiet,
)
from bothost.mcp.manager import McpManagerError
from bothost.mcp.registry.client import Registry, RegistryError
from bothost.mcp.registry.entries import is_registry_name
from bothost.mcp.registry.installer import RegistryInstall, install_entry
from bothost.platform import terminal_input

INSTALL_FAILED_EXIT = 1
SUMMARY_WIDTH = 90
SEARCH_LIMIT = 20  # entries `mcp search` shows unless --limit says otherwise
MAX_SEARCH_LIMIT = 200


def progress(line: str) -> None:
    click.echo(f"  {line}", err=True)


def checked_package(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    """PACKAGE checked before anything runs: a usage error (exit 2) unless it is a name with
    an optional version (bothost.mcp.install.parse_package) or a registry name."""
    if is_registry_name(value):
        return value
    try:
        parse_package(value)
    except PackageSpecError as exc:
        raise click.BadParameter(str(exc)) from None
    return value


@mcp_group.command("install")
@click.argument("package", callback=checked_package)
@click.option("--name", help="Server name (default: from the package, `mcp-server-time` → time).")
@click.option("--arg", "args", multiple=True, help="An argument for the server (repeatable).")
@click.option("--env", "env", multiple=True, help="K=V for the server's environment.")
@click.option("--command", "script", help="Which console script / bin to run, if several.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable result on stdout.")
@click.option("--registry", "registry", metavar="URL", help="MCP registry (default: mcp.registry).")
@click.option("-v", "--verbose", is_flag=True, help="Show pip's or npm's own output as it runs.")
@pass_runtime
def install_command(
    runtime: Runtime,
    package: str,
    name: str | None,
    args: tuple[str, ...],
    env: tuple[str, ...],
    script: str | None,
    as_json: bool,
    registry: str | None,
    verbose: bool,
) -> None:
    """Install PACKAGE from PyPI (NAME[==VERSION]), npm (npm:NAME, @scope/NAME) or the MCP
    registry (io.github.owner/server), register it as an MCP server under
    $BOTHOST_HOME/mcp/<name>/, start it and list its tools.

    \b
    Examples:
      bothost mcp install mcp-server-time
      bothost mcp install io.github.owner/server
    """
    output = progress if verbose or runtime.verbose else quiet
    if is_registry_name(package):
        install_from_registry(runtime, package, registry, name, args, env, script, as_json, output)
        return
    if registry:
        fail(f"--registry is for registry names (io.github.owner/server), not {package!r}")

    async def install() -> Any:
        return await install_server(
            manager(runtime),
            package,
            name=name,
            args=list(args),
            env=commands.pairs(env, "--env"),
            command=script,
            progress=progress,
            output=output,
        )

    try:
        result = runtime.run(install())
    except (InstallError, McpManagerError) as exc:
        fail(f"install failed: {exc}", INSTALL_FAILED_EXIT)
    installed = result.installed
    if as_json:
        click.echo(
            json.dumps(
                {
                    "name": result.name,
                    **installed.record(),
                    "path": str(installed.command),
                    "args": list(args),
                    "tools": result.tools,
                },
                indent=2,
            )
        )
        return
    click.echo(
        f"installed {result.name}: {installed.package.kind} {installed.package.name} "
        f"{installed.version} → {installed.command}"
    )
    echo_tools(result.name, result.tools)


def install_from_registry(
    runtime: Runtime,
    entry: str,
    registry: str | None,
    name: str | None,
    args: tuple[str, ...],
    env: tuple[str, ...],
    script: str | None,
    as_json: bool,
    output: Progress,
) -> None:
    url = registry or runtime.config.mcp.registry

    def ask(label: str, default: str) -> str:
        shown = f"{label} [{default}]: " if default else f"{label}: "
        return terminal_input(shown, err=True).strip() or default

    async def install() -> RegistryInstall:
        return await install_entry(
            manager(runtime),
            url,
            entry,
            name=name,
            args=list(args),
            env=commands.pairs(env, "--env"),
            command=script,
            ask=ask if sys.stdin.isatty() else None,
            progress=progress,
            output=output,
        )

    try:
        done = runtime.run(install())
    except (RegistryError, InstallError, McpManagerError) as exc:
        fail(f"install failed: {exc}", INSTALL_FAILED_EXIT)
    if as_json:
        click.echo(json.dumps(done.to_dict(), indent=2))
        return
    chosen = done.plan
    version = f" {done.version}" if done.version else ""
    click.echo(
        f"installed {done.name} from {done.entry.name}: {chosen.kind}{version} → {done.target}"
    )
    for variable in chosen.referenced:
        state = "not set here" if variable in chosen.unset else "set here"
        click.echo(f"  reads ${{env:{variable}}} from bothost's environment ({state})")
    if chosen.optional:
        click.echo(f"  left out (optional): {', '.join(chosen.optional)}")
    if not done.started:
        click.echo(
            f"not started: set {', '.join(chosen.unset)} where bothost runs, then "
            "`bothost mcp list --check`"
        )
        return
    echo_tools(done.name, done.tools)


@mcp_group.command("search")
@click.argument("query")
@click.option("--registry", "registry", metavar="URL", help="MCP registry (default: mcp.registry).")
@click.option(
    "--limit",
    type=click.IntRange(1, MAX_SEARCH_LIMIT),
    default=SEARCH_LIMIT,
    show_default=True,
    help="Show at most this many servers.",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_runtime
def search_command(
    runtime: Runtime, query: str, registry: str | None, limit: int, as_json: bool
) -> None:
    """Servers in the MCP registry whose name or description matches QUERY.

    \b
    Example:
      bothost mcp search weather
    """

    async def search() -> tuple[str, Any]:
        async with Registry(registry or runtime.config.mcp.registry) as reader:
            return reader.url, await reader.search(query, limit)

    try:
        url, found = runtime.run(search())
    except RegistryError as exc:
        fail(str(exc), INSTALL_FAILED_EXIT)
    if as_json:
        entries = [entry.to_dict() for entry in found.entries]
        click.echo(json.dumps({"registry": url, "servers": entries, "more": found.more}, indent=2))
        return
    for entry in found.entries:
        status = "" if entry.status == "active" else f" [{entry.status}]"
        kinds = ",".join(entry.kinds()) or "-"
        click.echo(f"{entry.name}  {entry.version or '-'}  ({kinds}){status}")
        if entry.description:
            click.echo(f"    {entry.description[:SUMMARY_WIDTH]}")
    count = len(found.entries)
    more = "; more match: narrow QUERY or raise --limit" if found.more else ""
    click.echo(
        f"{count} server{'' if count == 1 else 's'} in {url}{more}"
        + ("; install one with `bothost mcp install NAME`" if count else ""),
        err=True,
    )


@mcp_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Report what would be added; add nothing.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable report on stdout.")
@pass_runtime
def import_command(runtime: Runtime, file: Path, dry_run: bool, as_json: bool) -> None:
    """Add the MCP servers of a Claude Desktop, Cursor or VS Code JSON file.

    \b
    Example:
      bothost mcp import --dry-run ~/.cursor/mcp.json
    """
    try:
        report = runtime.run(import_file(manager(runtime), file.resolve(), dry_run))
    except ImportFileError as exc:
        fail(str(exc))
    if as_json:
        click.echo(json.dumps({**report.to_dict(), "dry_run": dry_run}, indent=2))
        return
    verb = "would add" if dry_run else "added"
    for entry in report.added:
        note = f"  ({entry.note})" if entry.note else ""
        click.echo(f"{verb} {entry.name} ({entry.transport}: {entry.target}){note}")
    for entry in report.skipped:
        click.echo(f"skipped {entry.source}: {entry.reason}")
    click.echo(
        f"{len(report.added)} {verb}, {len(report.skipped)} skipped "
        f"(from {report.format} in {report.file})",
        err=True,
    )
    if report.added and not dry_run:
        click.echo("check them with `bothost mcp list --check`", err=True)


def echo_tools(name: str, tools: list[dict[str, Any]]) -> None:
    """The tools a server just installed offers, a line each, and how to call one."""
    for tool in tools:
        summary = (tool.get("description") or "").strip().splitlines()
        click.echo(
            f"  {name}/{tool['name']:28} {summary[0][:SUMMARY_WIDTH] if summary else ''}".rstrip()
        )
    count = f"{len(tools)} tool{'' if len(tools) == 1 else 's'}"
    click.echo(f"{count}; try `bothost mcp call {name} TOOL '{{…}}'`")
