"""Imports sit at the top of a module; one inside a function only where ``ALLOWED`` says why.

An import inside a function hides what a module depends on, and an import moved there to
dodge a cycle is still the cycle (``tests/test_layers.py`` counts it as one). So, as that test
does for the layers, every module under ``bothost/`` is parsed with :mod:`ast` and every
import inside a function body, at any depth, must be named in ``ALLOWED`` by (importing module,
imported module) with its reason. A bothost import is keyed by the module it resolves to
(``from bothost.mcp import commands`` -> ``bothost.mcp.commands``); any other by its top-level
package (``from psycopg.adapt import Loader`` -> ``psycopg``). Reasons are few and named
(``REASONS``); a "start-up" one carries its cost as ``python -X importtime`` measured it.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

from tests.test_layers import MODULES  # every core module by name, as the layer test reads it

# why an import may wait for the function that uses it; each reason starts with one of these
REASONS = (
    "cli command table",  # the module a command runs, imported when that command runs
    "vendor SDK or optional backend",  # a driver or SDK only some paths need: name the path
    "start-up",  # its measured cost on a path that must not pay for it
    "cycle inside a package",  # name the cycle
    "upward",  # an upward import tests/test_layers.py's EXCEPTIONS lists, run where it is used
)

# (importing module, imported module or top-level package) -> why it is imported lazily
ALLOWED: dict[tuple[str, str], str] = {
    # the CLI: a command's heavy modules wait for the command (bothost.cli.LAZY_COMMANDS
    # does the same for whole command modules)
    ("bothost.cli.core", "bothost.host.serve"): "cli command table: run and chat's host "
    "(host.host and what it wires, ~0.12 s) is not for --help, config show, doctor...",
    ("bothost.cli.core", "bothost.host.doctor"): "cli command table: doctor's checks (~10 ms), "
    "only for bothost doctor",
    ("bothost.cli.core", "yaml"): "start-up: yaml is ~23 ms, and of the core commands only "
    "config show writes YAML (tests/core/test_cli_imports.py keeps it out of chat)",
    ("bothost.cli.events", "bothost.host.wiring"): "start-up: host.wiring (the turn, the tick "
    "agent, ~17 ms after the CLI) is for tick only; events list and the other commands of "
    "cli.events need none (events push gets it through Runtime.push_event)",
    ("bothost.cli.events", "bothost.host.dryrun"): "start-up: host.dryrun imports host.host "
    "and host.wiring, as above; tick --dry-run only",
    ("bothost.host.reload", "bothost.host.wiring"): "start-up: host.wiring is ~24 ms of "
    "bothost --help and bothost reload, which import host.reload through host.reload_request",
    # the host: what building, starting or listening needs waits for the command that does it
    ("bothost.cli.runtime", "bothost.host.host"): "start-up: host.host and what it wires "
    "(~66 ms after the CLI's modules) is for a command that opens the store; --help, config "
    "show, doctor build no host",
    ("bothost.cli.runtime", "bothost.host.wiring"): "start-up: host.wiring (~10 ms after "
    "host.host) starts the events for events push and the MCP commands; a command that only "
    "reads the store builds its host without it",
    ("bothost.cli.runtime", "bothost.events.push"): "start-up: events.push with the MCP "
    "listener's modules (~7 ms after host.wiring, ~20 ms alone) is for events push and the "
    "MCP commands' recorder; chat -m help imports none of it",
    ("bothost.host.host", "bothost.http.server"): "start-up: the HTTP listener with aiohttp "
    "(~0.24 s after host.host) is made when run listens; bothost chat never listens",
    ("bothost.host.host", "bothost.host.wiring"): "start-up: host.wiring (~5-10 ms after "
    "host.host) is for starting the host and a tick; a command that reads the store through a "
    "host (events list, schedule list) starts neither",
    ("bothost.host.host", "bothost.mcp.oauth.links"): "start-up: mcp.oauth.links with html "
    "and secrets (~2.3 ms of chat -m help) makes a login link, only for a server that needs "
    "a login",
    # vendor SDKs and optional backends, for the paths that use them
    ("bothost.config.file", "yaml"): "start-up: yaml is ~23 ms; a command whose config is the "
    "packaged defaults reads their parsed twin and needs none (tests/core/test_cli_imports.py)",
    ("bothost.events.schedule", "croniter"): "vendor SDK or optional backend: croniter (with "
    "dateutil, ~8 ms) only when tick.schedules are configured",
    ("bothost.schedules.when", "croniter"): "vendor SDK or optional backend: croniter only for "
    "a cron job (tests/core/test_chat_model_imports.py keeps it out of chat -m)",
    ("bothost.host.chat_completion", "readline"): "vendor SDK or optional backend: readline is "
    "missing on some platforms (ImportError is handled there); the terminal chat only",
    ("bothost.store.health", "psycopg"): "vendor SDK or optional backend: psycopg (~57 ms) is "
    "an extra, looked at only to classify a PostgreSQL error",
    ("bothost.store.postgres", "psycopg"): "vendor SDK or optional backend: psycopg (~57 ms) "
    "is the postgres extra; a SQLite store never imports it, and without it the error names "
    "the extra to install",
    ("bothost.mcp.commands", "bothost.mcp.oauth.login"): "vendor SDK or optional backend: "
    "aiohttp (~0.2 s), only for bothost mcp login",
    ("bothost.mcp.commands", "bothost.mcp.oauth.auth"): "vendor SDK or optional backend: "
    "aiohttp, only for bothost mcp login",
    ("bothost.mcp.runner", "bothost.mcp.http"): "vendor SDK or optional backend: aiohttp, only "
    "for a server with a url",
    ("bothost.mcp.runner", "bothost.mcp.oauth.auth"): "vendor SDK or optional backend: "
    "aiohttp, only for a server with a url",
    ("bothost.mcp.oauth.links", "aiohttp"): "vendor SDK or optional backend: aiohttp "
    "(~0.1 s) only for the link's route and page on the listener; Host.mcp_login_link makes "
    "links in a host that may not listen (bothost chat)",
    ("bothost.mcp.runner", "bothost.mcp.session"): "start-up: the MCP client stack (~7 ms and "
    "up) waits for the first server that starts; a turn without tools starts none "
    "(tests/core/test_cli_imports.py::test_a_turn_without_tools_imports_no_mcp_client)",
    ("bothost.mcp.runner", "bothost.mcp.stdio"): "start-up: the MCP client stack, as above",
    ("bothost.mcp.revision", "bothost.mcp.stdio"): "start-up: the MCP client stack, as above "
    "(revision is imported with the manager, before any server starts)",
    ("bothost.llm.plugin", "bothost.llm.anthropic"): "start-up: a provider module with "
    "llm.wire, bothost.sse and email.utils (~16 ms besides asyncio, at load ~20) only when "
    "that provider is configured; --help and the offline agent need none",
    ("bothost.llm.plugin", "bothost.llm.openai"): "start-up: as above",
    ("bothost.llm.wire", "aiohttp"): "start-up: aiohttp (~0.12 s) waits for the first model "
    "request; a provider is built before anyone knows it will ask "
    "(tests/llm/test_wire.py::test_building_a_provider_imports_no_http_library)",
    ("bothost.llm.wire", "yarl"): "start-up: aiohttp's URL type, as above",
    ("bothost.mcp.registry.client", "aiohttp"): "start-up: aiohttp (~0.15 s) only when a "
    "registry is read; --help imports `mcp search`'s module to list it "
    "(tests/core/test_cli_imports.py::test_help_and_the_mcp_group_import_no_http_client)",
    # cycles and layers
    ("bothost.api", "bothost.http.appkeys"): "upward: api.app_key makes the listener's aiohttp "
    "keys on first use (tests/test_layers.py EXCEPTIONS); at the top, aiohttp (~0.1 s) would "
    "be in every command's start (issue 19)",
    ("bothost.crosshost", "bothost.crosshost.postgres"): "cycle inside a package: "
    "crosshost.postgres subclasses crosshost.CrossHostBase, and crosshost.open_crosshost "
    "picks it for a PostgreSQL store",
    ("bothost.store.migrations", "bothost.rules.origin"): "upward: migration 11 rewrites "
    "stored rules as rules.origin reads them (tests/test_layers.py EXCEPTIONS)",
    ("bothost.store.migrations", "bothost.rules.who"): "upward: migration 13, as above",
}


def resolve(name: str) -> str:
    """The module a dotted bothost name lives in; a third party's top-level package."""
    if not name.startswith("bothost."):
        return name.split(".")[0]
    while name not in MODULES and "." in name:
        name = name.rpartition(".")[0]
    return name


def imported(node: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [resolve(alias.name) for alias in node.names]
    base = node.module or ""
    if node.level:
        up = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join(up + ([node.module] if node.module else []))
    if not base.startswith("bothost"):
        return [resolve(base)]
    return [resolve(f"{base}.{alias.name}") for alias in node.names]


@cache
def lazy_imports(module: str, path: Path) -> list[tuple[str, int]]:
    """(module imported, line) of every import inside a function of ``module``."""
    tree = ast.parse(path.read_text("utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    seen: set[int] = set()
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in seen:
                seen.add(id(node))
                found += [(target, node.lineno) for target in imported(node, package)]
    return found


def unexplained() -> list[str]:
    return [
        f"{module}:{line} imports {target} inside a function"
        for module, path in MODULES.items()
        for target, line in lazy_imports(module, path)
        if (module, target) not in ALLOWED
    ]


def test_every_import_inside_a_function_has_a_reason():
    assert unexplained() == [], "move it to the top, or name its reason in ALLOWED"


def test_every_reason_is_a_named_one():
    assert [why for why in ALLOWED.values() if not why.startswith(REASONS)] == []


def test_every_allowed_import_is_still_lazy():
    every = {
        (module, target)
        for module, path in MODULES.items()
        for target, _ in lazy_imports(module, path)
    }
    assert [pair for pair in ALLOWED if pair not in every] == []


@pytest.mark.parametrize(
    ("source", "allowed", "found"),
    [
        ("def f():\n    import croniter\n", None, ["croniter"]),
        ("def f():\n    import croniter\n", "croniter", []),
        ("def f():\n    from psycopg.adapt import Loader\n", None, ["psycopg"]),
        (
            "class C:\n    async def f(self):\n        from bothost.mcp import stdio\n",
            None,
            ["bothost.mcp.stdio"],
        ),
        ("def f():\n    def g():\n        from . import tools\n", None, ["bothost.agent.tools"]),
        (
            "def f():\n    from bothost.mcp import stdio, session\n",
            "bothost.mcp.stdio",
            ["bothost.mcp.session"],
        ),
        ("import croniter\nfrom bothost.mcp import stdio\n", None, []),
        ("if TYPE_CHECKING:\n    from bothost.host.host import Host\n", None, []),
    ],
)
def test_the_check_catches_an_import_inside_a_function(
    tmp_path, monkeypatch, source, allowed, found
):
    path = tmp_path / "probe.py"
    path.write_text(source, "utf-8")
    monkeypatch.setitem(MODULES, "bothost.agent.probe", path)
    if allowed is not None:
        monkeypatch.setitem(ALLOWED, ("bothost.agent.probe", allowed), "start-up: a probe")
    mine = [text for text in unexplained() if text.startswith("bothost.agent.probe:")]
    assert [text.split()[2] for text in mine] == found
