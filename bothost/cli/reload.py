"""The ``reload`` command: the host running on this home reads its config now."""

from __future__ import annotations

import sys

import click

from bothost.cli.runtime import Runtime
from bothost.host.reload_request import ReloadRequestError, request_reload

pass_runtime = click.make_pass_decorator(Runtime)


@click.command("reload", short_help="Make the running host apply its config file now.")
@pass_runtime
def reload_command(runtime: Runtime) -> None:
    """Make the host running on this home read its config file now (as SIGHUP does).

    Prints what it applied and the keys that need a restart; exits 1 when the edit was
    refused (the running config stays) or no host runs on this home.
    """
    try:
        answer = request_reload(runtime.home)
    except ReloadRequestError as exc:
        click.echo(f"bothost: {exc}", err=True)
        sys.exit(1)
    if answer.error:
        click.echo(
            f"bothost: config not applied: {answer.error}; the running config stays", err=True
        )
        sys.exit(1)
    for line in answer.lines():
        click.echo(line)
