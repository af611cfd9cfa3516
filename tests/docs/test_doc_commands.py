"""Every `bothost …` line of a ```sh block in README.md and docs/ names a command and
options that exist and parse as written.

Parsed, not run (running them needs a network, accounts and servers): each line goes through
the command's own click parser, so a renamed option, a removed command or a missing
argument fails here. A file argument that does not exist on this machine is fine; the
synopsis blocks (```text or bare fences, with `[--json]` and `NAME`) are not commands.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from bothost.cli import cli, lazy_command

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(
    r"^(?P<indent> *)```(?P<lang>[\w-]*)[ \t]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
SHELL = ("sh", "bash", "shell", "console")
GLOBAL_WITH_VALUE = ("--config", "--home")


def command_lines() -> list[tuple[str, str]]:
    """(where, command) of every `bothost …` in a shell block, a line's `&&` parts apart."""
    found = []
    for doc in DOCS:
        text = doc.read_text("utf-8")
        for match in FENCE.finditer(text):
            if match["lang"] not in SHELL:
                continue
            first = text.count("\n", 0, match.start("body")) + 1
            for offset, line in enumerate(match["body"].splitlines()):
                line = re.split(r"\s+#\s", line.strip().removeprefix("$ "))[0]
                for part in line.split(" && "):
                    if part.startswith("bothost "):
                        found.append((f"{doc.relative_to(ROOT)}:{first + offset}", part))
    return found


LINES = command_lines()


def resolve(args: list[str]) -> tuple[click.Command | None, list[str], list[str]]:
    """The command ``args`` name (past the global options), its path, and its own args."""
    while args and args[0].startswith("-"):
        option = args.pop(0)
        if option in GLOBAL_WITH_VALUE:
            args.pop(0)
    command: click.Command = cli
    path: list[str] = []
    while isinstance(command, click.Group) and args:
        sub = command.commands.get(args[0]) or (lazy_command(args[0]) if command is cli else None)
        if sub is None:
            return None, [*path, args[0]], args
        command = sub
        path.append(args.pop(0))
    return command, path, args


def test_the_docs_have_command_examples():
    assert len(LINES) >= 10
    assert any(where.startswith("README.md") for where, _ in LINES)


@pytest.mark.parametrize("line", [line for _, line in LINES], ids=[where for where, _ in LINES])
def test_a_documented_command_parses(line):
    command, path, rest = resolve(shlex.split(line)[1:])
    assert command is not None, f"no command {' '.join(path)!r}"
    if isinstance(command, click.Group):
        return  # a group alone prints its help
    try:
        command.make_context(" ".join(path), rest)
    except click.exceptions.Exit:
        pass  # --help
    except click.BadParameter as exc:
        # a file of the reader's own machine (a Claude Desktop config) need not exist here
        assert "does not exist" in exc.format_message(), exc.format_message()
