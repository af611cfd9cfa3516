"""The ``bothost`` command line: global options, the command group and plugin commands.

Commands parse their arguments and call one core function; the work lives elsewhere.
:func:`main` is the one place where a failure becomes what the user sees: one line on
stderr and an exit status from :data:`EXIT_STATUS` (2 for config and plugin errors, 1 for
everything else; 130 when Ctrl-C interrupted the command); the traceback only with ``-v``.
A config error exits having written nothing.
"""

from __future__ import annotations

import importlib
import logging
import sys
import traceback
from typing import Any

import click

from bothost import redact
from bothost.cli import core
from bothost.cli.runtime import Runtime
from bothost.config import ConfigError
from bothost.config.home import HomeError
from bothost.hooks.call import impls
from bothost.hooks.discovery import DiscoveryError
from bothost.hooks.startup import RegistrationError
from bothost.logs.terminal import guarded_output
from bothost.store import StoreError
from bothost.store.dump import DumpError
from bothost.store.errors import database_failures

CONFIG_EXIT = 2
FAILURE_EXIT = 1
# Ctrl-C (SIGINT) ended the command before it was done: 128 + SIGINT, what a shell reports
# for a program SIGINT ended, so a script tells "interrupted" from "failed" (click said
# "Aborted!" and exited 1). `bothost run` is stopped by SIGINT by design: 0 (serve.py).
INTERRUPTED_EXIT = 130

# What a failure that reaches main() prints and how the process ends, first match wins.
# The label says what kind of thing failed; an unexpected error also names its type.
EXIT_STATUS: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], int, str], ...] = (
    (ConfigError, CONFIG_EXIT, "config error"),
    (DiscoveryError, CONFIG_EXIT, "plugin error"),
    (RegistrationError, CONFIG_EXIT, "plugin error"),
    (HomeError, FAILURE_EXIT, "home error"),
    (StoreError, FAILURE_EXIT, "database error"),
    (DumpError, FAILURE_EXIT, "db export/import"),
    (MemoryError, FAILURE_EXIT, "out of memory"),
    (Exception, FAILURE_EXIT, ""),
)


# Commands whose module is imported only when the command is used (or listed by --help):
# name → (modules, attribute of the first). `bothost chat` imported every command's module
# (the events commands alone brought croniter and the tick) for a command it never ran
# (issue 19). The core commands (chat among them) are imported with the group.
LAZY_COMMANDS: dict[str, tuple[tuple[str, ...], str]] = {
    "db": (("bothost.cli.db",), "db_group"),
    "mcp": (("bothost.cli.mcp", "bothost.cli.mcp_install"), "mcp_group"),  # install extends it
    "events": (("bothost.cli.events",), "events_group"),
    "tick": (("bothost.cli.events",), "tick_command"),
    "briefings": (("bothost.cli.events",), "briefings_command"),
    "rules": (("bothost.cli.rules",), "rules_group"),
    "reload": (("bothost.cli.reload",), "reload_command"),
    "schedule": (("bothost.cli.schedule",), "schedule_group"),
    "triage": (("bothost.cli.triage",), "triage_group"),
    "usage": (("bothost.cli.usage",), "usage_command"),
}


def lazy_command(name: str) -> click.Command | None:
    """The command `name` of :data:`LAZY_COMMANDS`, its modules imported now; else None."""
    if name not in LAZY_COMMANDS:
        return None
    modules, attribute = LAZY_COMMANDS[name]
    loaded = [importlib.import_module(module) for module in modules]
    command: click.Command = getattr(loaded[0], attribute)
    return command


class BothostGroup(click.Group):
    """A group that also offers the commands plugins add through ``register_commands``."""

    def plugin_commands(self, ctx: click.Context) -> dict[str, click.Command]:
        runtime = ctx.ensure_object(Runtime)
        if runtime.plugin_commands is None:
            extra = click.Group()
            for impl in impls(runtime.pm, "register_commands"):  # a broken one is skipped
                try:
                    impl.function(cli=extra)
                except Exception as exc:
                    click.echo(
                        f"bothost: plugin {impl.plugin_name} failed to add commands: {exc}",
                        err=True,
                    )
            runtime.plugin_commands = dict(extra.commands)
        return runtime.plugin_commands

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:  # before click turns it into "Aborted!" and 1
            click.echo("\nbothost: interrupted", err=True)
            raise click.exceptions.Exit(INTERRUPTED_EXIT) from None

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = super().get_command(ctx, name) or lazy_command(name)
        if command is not None or ctx.resilient_parsing:
            return command
        ctx.ensure_object(Runtime).configure(ctx.params)
        return self.plugin_commands(ctx).get(name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = set(super().list_commands(ctx)) | set(LAZY_COMMANDS)
        try:
            ctx.ensure_object(Runtime).configure(ctx.params)
            names |= set(self.plugin_commands(ctx))
        except (ConfigError, DiscoveryError, RegistrationError):
            pass  # --help still lists the built-in commands
        return sorted(names)


EPILOG = """\b
Start here:
  bothost chat -m help     what the offline agent can do (no model or key needed)
  bothost run              serve the web chat on http://127.0.0.1:8765/
  bothost doctor           what is wrong with this setup, and the fix for each
  bothost docs             the documentation; bothost docs llm connects a model

\b
Exit status: 0 success; 1 failure (model, database, network, or a command's own
"no", such as no server or rule by that name); 2 config, plugin or usage error
(nothing was written); 130 interrupted by Ctrl-C (bothost run: 0, Ctrl-C is how it
stops)."""


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class OneLineFormatter(logging.Formatter):
    """A record on the command line's stderr without ``-v``: a failure's traceback (a
    plugin's hook raising during ``events push``, say) is its last line and where to see
    the rest, so the command's own output is not buried; ``-v`` shows it whole."""

    def format(self, record: logging.LogRecord) -> str:
        saved = record.exc_info, record.exc_text, record.stack_info
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        try:
            text = super().format(record)
        finally:
            record.exc_info, record.exc_text, record.stack_info = saved
        if saved[0] and saved[0][1] is not None:
            error = traceback.format_exception_only(saved[0][1])[-1].strip()
            text += f" ({redact.redact(error)}; bothost -v COMMAND shows the traceback)"
        return text


@click.group(cls=BothostGroup, epilog=EPILOG)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    help="Config file merged over the others (also BOTHOST_CONFIG).",
)
@click.option(
    "--home",
    type=click.Path(file_okay=False, readable=False),  # HomeError says why
    help="State directory (default $BOTHOST_HOME or ~/.bothost).",
)
@click.option("-v", "--verbose", count=True, help="More logging (-vv for debug).")
@click.version_option(package_name="bothost")
@click.pass_context
def cli(ctx: click.Context, config_file: str | None, home: str | None, verbose: int) -> None:
    """bothost — a chat bot host for Slack, web chat and webhooks, with MCP servers as plugins."""
    runtime = ctx.ensure_object(Runtime)
    runtime.configure(ctx.params)
    runtime.verbose = verbose
    level = logging.WARNING - 10 * verbose
    before = set(logging.getLogger().handlers)
    logging.basicConfig(
        level=max(level, logging.DEBUG),
        stream=sys.stderr,
        format=LOG_FORMAT,
    )
    for handler in set(logging.getLogger().handlers) - before:
        # stderr shows what -v asks for, whatever level the log file is set to (log_level:
        # `bothost run` lowers the root logger's to `info` for its file): by default a
        # person sees warnings and the one "bothost is running" line README promises
        handler.setLevel(max(level, logging.DEBUG))
        if not verbose:
            handler.setFormatter(OneLineFormatter(LOG_FORMAT))
        redact.protect(handler)  # the secrets of the config, once it is read
    ctx.call_on_close(runtime.close)


def add_commands() -> None:
    for command in core.COMMANDS:
        cli.add_command(command)


add_commands()


def main(argv: list[str] | None = None) -> Any:
    runtime = Runtime()
    with guarded_output():  # third parties' text is shown on the terminal, never obeyed
        try:
            return cli.main(args=argv, prog_name="bothost", standalone_mode=True, obj=runtime)
        except Exception as exc:  # boundary: one line for the user; the traceback with -v
            sys.exit(report(exc, runtime.verbose))


def report(exc: BaseException, verbose: int) -> int:
    """Print ``exc`` as one line on stderr (after its traceback with -v); its exit status."""
    if isinstance(exc, database_failures()):  # a driver's failure (not a table: see its doc)
        status, label = FAILURE_EXIT, "database error"
    else:
        status, label = next((s, lbl) for cls, s, lbl in EXIT_STATUS if isinstance(exc, cls))
    if verbose:
        traceback.print_exception(exc, file=sys.stderr)
    text = " ".join(str(exc).split()) or type(exc).__name__
    if not label:
        hint = "" if verbose else " (bothost -v COMMAND shows where)"
        label = f"unexpected {type(exc).__name__}{hint}"
    click.echo(f"bothost: {label}: {text}", err=True)
    return status
