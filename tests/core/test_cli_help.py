"""`bothost --help` and every command's help, as a new user reads them: every command and
option says what it does, the command list is not cut off mid-sentence, and the exit
statuses are written down."""

from __future__ import annotations

import click
from click.testing import CliRunner

from bothost.cli import LAZY_COMMANDS, cli, lazy_command


def commands() -> dict[str, click.Command]:
    """Every command by its full name, the lazily imported ones and their subcommands too."""
    found: dict[str, click.Command] = {}

    def walk(name: str, command: click.Command) -> None:
        found[name] = command
        if isinstance(command, click.Group):
            for sub, inner in command.commands.items():
                walk(f"{name} {sub}", inner)

    for name, command in cli.commands.items():
        walk(name, command)
    for name in LAZY_COMMANDS:
        command = lazy_command(name)
        assert command is not None
        walk(name, command)
    return found


def test_every_command_and_option_says_what_it_does():
    undocumented = []
    for name, command in commands().items():
        if not (command.help or "").strip():
            undocumented.append(name)
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden and not param.help:
                undocumented.append(f"{name} {param.opts[-1]}")
    assert undocumented == []


def test_the_command_list_is_not_cut_off_and_names_the_exit_statuses():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    listing = result.stdout.partition("Commands:")[2]
    assert "..." not in listing, listing
    assert "Exit status" in result.stdout and "bothost docs" in result.stdout


def test_the_commands_a_new_user_starts_with_show_an_example():
    # and the ones README's walk-through runs next (found from outside: no example there)
    for name in (
        "run",
        "chat",
        "doctor",
        "install",
        "docs",
        "mcp add",
        "mcp call",
        "mcp tools",
        "mcp install",
        "mcp import",
        "events retry",
        "tick",
        "config show",
    ):
        result = CliRunner().invoke(cli, [*name.split(), "--help"])
        assert result.exit_code == 0, name
        assert "Example" in result.stdout, name
