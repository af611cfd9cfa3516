"""``bothost mcp install`` and ``bothost mcp import``: new servers from packages and files.

Thin commands on the ``mcp`` group over :mod:`bothost.mcp.install` and
:mod:`bothost.mcp.importer`. Install progress (a line per step; with ``-v`` each pip or npm
output line, prefixed) goes to stderr, so stdout holds only the result (or JSON with
``--json``).
"""

from __future__ import annotations

import json
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
    install_server,
    parse_package,
    quiet,
)
from bothost.mcp.manager import McpManagerError

INSTALL_FAILED_EXIT = 1
SUMMARY_WIDTH = 90


def progress(line: str) -> None:
    click.echo(f"  {line}", err=True)


def checked_package(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    """PACKAGE checked before anything runs: a usage error (exit 2) unless it is a name with
    an optional version (bothost.mcp.install.parse_package)."""
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
    verbose: bool,
) -> None:
    """Install PACKAGE from PyPI (NAME[==VERSION]) or npm (npm:NAME, @scope/NAME), register it
    as an MCP server under $BOTHOST_HOME/mcp/<name>/, start it and list its tools.

    \b
    Example:
      bothost mcp install mcp-server-time
    """

    async def install() -> Any:
        return await install_server(
            manager(runtime),
            package,
            name=name,
            args=list(args),
            env=commands.pairs(env, "--env"),
            command=script,
            progress=progress,
            output=progress if verbose or runtime.verbose else quiet,
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
    for tool in result.tools:
        summary = (tool.get("description") or "").strip().splitlines()
        click.echo(
            f"  {result.name}/{tool['name']:28} "
            f"{summary[0][:SUMMARY_WIDTH] if summary else ''}".rstrip()
        )
    click.echo(f"{len(result.tools)} tools; try `bothost mcp call {result.name} TOOL '{{…}}'`")


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
