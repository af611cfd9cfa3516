"""What the program tells people to read exists where they installed it: `bothost docs TOPIC`.

A wheel user has no checkout, so no `docs/llm.md`: a message naming a file under docs/ (or
the README) points at nothing. Every string of the code that is not a docstring (docstrings
are for the code's readers, who have the tree) and every file shipped as data is searched;
each `bothost docs TOPIC` they name must print a page.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from bothost.cli import cli, manual

ROOT = Path(__file__).resolve().parents[2]
CODE = ["bothost", "plugins", "mcp_servers"]
DATA = [ROOT / "config", ROOT / "plugins" / "web" / "static"]
TREE_PATH = re.compile(r"\bdocs/[\w/.-]*\.md\b|\bREADME(\.md)?\b")
COMMAND = re.compile(r"`bothost docs ([\w/-]+)`")


def docstrings(tree: ast.AST) -> set[int]:
    """ids of the constants that are docstrings (first statement of a module, class, def)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                found.add(id(body[0].value))
    return found


def user_strings() -> list[tuple[str, str]]:
    """(where, text) of every string the program may show: code strings and shipped data."""
    found = []
    for folder in CODE:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "manual.py":  # the module that reads the README, by that name
                continue
            tree = ast.parse(path.read_text("utf-8"))
            skip = docstrings(tree)
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    if id(node) not in skip:
                        found.append((f"{path.relative_to(ROOT)}:{node.lineno}", node.value))
    for folder in DATA:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix in {".yaml", ".md", ".html", ".js"}:
                found.append((str(path.relative_to(ROOT)), path.read_text("utf-8")))
    return found


STRINGS = user_strings()


def test_no_message_points_at_a_file_of_the_checkout():
    pointing = [(where, m.group(0)) for where, text in STRINGS for m in TREE_PATH.finditer(text)]
    assert pointing == []


def test_every_docs_command_the_program_names_prints_a_page():
    named = {m.group(1) for _, text in STRINGS for m in COMMAND.finditer(text)}
    assert {"llm", "slack"} <= named  # the offline agent's help and the Slack errors
    for topic in named:
        assert manual.read(topic).startswith("# "), topic


def test_docs_lists_the_topics_and_prints_one():
    listed = CliRunner().invoke(cli, ["docs"])
    assert listed.exit_code == 0, listed.output
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert names[:2] == ["readme", "index"] and {"llm", "plugins", "servers/ssh"} <= set(names)
    page = CliRunner().invoke(cli, ["docs", "llm"])
    assert page.exit_code == 0
    assert page.stdout == (ROOT / "docs" / "llm.md").read_text("utf-8")
    assert CliRunner().invoke(cli, ["docs", "ssh"]).stdout.startswith("# The ssh server")
    readme = CliRunner().invoke(cli, ["docs", "readme"]).stdout
    assert readme.startswith("# bothost\n")


@pytest.mark.parametrize("topic", ["nothing", "servers"])
def test_docs_names_the_topics_when_one_is_unknown(topic):
    result = CliRunner().invoke(cli, ["docs", topic])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"bothost: no page named '{topic}'; the topics are: readme,")
