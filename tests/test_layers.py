"""The core imports only downward: models → store → llm/mcp → agent → events → host → cli.

As ``tests/test_boundaries.py`` keeps plugins on their side of the public interface, this
keeps the core's packages in their layers (docs/architecture.md draws them). Every module
under ``bothost/`` is parsed with :mod:`ast`; every import counts, the ones inside functions
too (an import moved into a function to dodge a cycle is still the cycle). Imports under
``if TYPE_CHECKING:`` do not: they name a type for the checker and make no edge at run time
(the typed plugin surface, ``hookspecs`` and ``api``, names the core's real types that way).

A unit is a package directly under ``bothost/`` or a module at the top. An import from one
unit into another must go to the same layer or a lower one, and the units must form no
cycle. What cannot follow the rule today is listed in ``EXCEPTIONS`` with its reason.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "bothost"

# unit -> layer; a unit may import its own layer and the ones below
LAYERS: dict[str, int] = {
    # values and the plugin surface: what plugins import (tests/test_boundaries.py, PUBLIC)
    "models": 0,
    "platform": 0,
    "api": 0,
    "hookspecs": 0,
    "jsondecode": 0,
    "redact": 0,
    "identity": 0,
    "hidden": 0,
    "sse": 0,  # the Server-Sent-Events parser: MCP's HTTP transport and the LLM providers
    "logs": 0,  # log files, rate-limited lines, the terminal: stdlib only, so anyone may log
    "store": 1,
    "crosshost": 2,  # the store's several-hosts half (leases over PostgreSQL)
    "hooks": 2,  # finding, calling and collecting plugins; startup applies their migrations
    "config": 3,  # plugins declare sections (hooks); every layer above reads it
    "usage": 4,
    "llm": 4,
    "mcp": 4,
    "rules": 4,  # permission rules: what agent/approvals asks before a tool runs
    "agent": 5,
    "events": 6,
    "schedules": 6,
    "queries": 7,  # public, but it reads every store table for plugins: above what it reads
    "http": 7,
    "host": 8,
    "cli": 9,
    "__main__": 10,
}

# (importing module, imported unit or module) -> why it may go up a layer today
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("bothost.api", "http"): "api.app_key re-exports the listener's aiohttp keys to plugins, "
    "made on first use: importing aiohttp was a third of every CLI start (issue 19)",
    ("bothost.llm.offline", "agent"): "the offline provider is an agent without a model: it "
    "runs the agent's tools itself, registered as an LLM provider so a turn needs no branch",
    ("bothost.store.migrations", "rules"): "migrations 11 and 13 rewrite stored rules as the "
    "rules read them (pure functions of a row, no store in them), imported only when applied",
}


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(CORE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = modules()


def type_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:``."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            found |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return found


def resolve(name: str) -> str:
    """The module a dotted name lives in (``bothost.config.Config`` -> ``bothost.config``)."""
    while name not in MODULES and "." in name:
        name = name.rpartition(".")[0]
    return name


def imports(module: str) -> list[tuple[str, int]]:
    """(module imported, line) of every run-time import of a core module, at any depth."""
    return imports_of(module, MODULES[module])


@cache
def imports_of(module: str, path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text("utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    skip = type_only(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            names = [f"{base}.{alias.name}" for alias in node.names]
        for name in names:
            if name.startswith("bothost."):
                found.append((resolve(name), node.lineno))
    return found


def unit(module: str) -> str:
    return module.split(".")[1] if module.count(".") else module


def edges() -> list[tuple[str, str, int]]:
    """(importer, imported, line) across units, exceptions left out."""
    found = []
    for module in MODULES:
        for target, line in imports(module):
            if unit(target) == unit(module) or target == "bothost":
                continue
            if (module, target) in EXCEPTIONS or (module, unit(target)) in EXCEPTIONS:
                continue
            found.append((module, target, line))
    return found


def upward(found: list[tuple[str, str, int]]) -> list[str]:
    return [
        f"{module}:{line} imports {target} (layer {LAYERS[unit(target)]} > {LAYERS[unit(module)]})"
        for module, target, line in found
        if LAYERS[unit(target)] > LAYERS[unit(module)]
    ]


def cycles(found: list[tuple[str, str, int]]) -> list[list[str]]:
    """The groups of units that import each other (Tarjan's strongly connected components)."""
    graph: dict[str, set[str]] = {}
    for module, target, _ in found:
        graph.setdefault(unit(module), set()).add(unit(target))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while (top := stack.pop()) != node:
                group.append(top)
            group.append(node)
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_every_core_unit_has_a_layer():
    units = {unit(module) for module in MODULES if module != "bothost"}
    assert units - set(LAYERS) == set(), "give the new package a layer in LAYERS"
    assert set(LAYERS) - units == set(), "a unit in LAYERS no longer exists"


def test_the_top_of_bothost_stays_small():
    top = sorted(path.name for path in CORE.glob("*.py"))
    assert len(top) <= 12, top


def test_the_core_imports_only_downward():
    assert upward(edges()) == []


def test_no_cycle_between_core_units():
    assert cycles(edges()) == []


def test_every_exception_is_still_needed():
    every = {(module, target) for module in MODULES for target, _ in imports(module)}
    every |= {(module, unit(target)) for module, target in every}
    assert [pair for pair in EXCEPTIONS if pair not in every] == []


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("from bothost.host.host import Host", ["layer 8 > 5"]),
        ("def f():\n    from bothost.events import tick\n", ["layer 6 > 5"]),
        ("if TYPE_CHECKING:\n    from bothost.host.host import Host\n", []),
        ("from bothost.store import Store\nfrom bothost import models\n", []),
    ],
)
def test_the_check_catches_an_upward_import(tmp_path, monkeypatch, source, found):
    path = tmp_path / "probe.py"
    path.write_text(source, "utf-8")
    monkeypatch.setitem(MODULES, "bothost.agent.probe", path)
    mine = [edge for edge in edges() if edge[0] == "bothost.agent.probe"]
    assert [text.split("(")[1].rstrip(")") for text in upward(mine)] == found


def test_the_check_catches_a_cycle():
    found = [("bothost.store.db", "bothost.config", 1), ("bothost.config", "bothost.store", 1)]
    assert cycles(found) == [["config", "store"]]
