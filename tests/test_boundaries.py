"""Plugins reach the core only through its public interface.

Core tables are private to ``bothost/`` (a second store backend must not have to chase SQL
through the plugins), and so are the core modules outside the short public list in
``docs/plugins.md``. The table list is derived from the core's own migrations, so a new
core table is covered the day it is added.
"""

from __future__ import annotations

import ast
import re
import sqlite3
from pathlib import Path

from bothost.hooks.discovery import load_plugins, new_plugin_manager
from bothost.hooks.startup import build_migrations
from bothost.store.conn import SqliteConn
from bothost.store.migrations import apply_migrations

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = ROOT / "plugins"

# The core modules a plugin may import (docs/plugins.md, "What is public").
PUBLIC = {
    "bothost.api",
    "bothost.models",
    "bothost.platform",
    "bothost.hookspecs",
    "bothost.agent.tools",
    "bothost.llm.base",
    "bothost.queries",
    "bothost.jsondecode",
    "bothost.redact",
    "bothost.identity",
}
SQL_VERBS = r"(?:from|join|into|update|table|exists)"


def core_tables() -> set[str]:
    """Every table the core's migrations create (not the plugins' own)."""
    pm = new_plugin_manager()
    load_plugins(pm)
    core = [
        m for m in build_migrations(pm) if not m.apply.__module__.startswith("bothost.plugins.")
    ]
    db = SqliteConn(sqlite3.connect(":memory:", isolation_level=None))
    apply_migrations(db, core)
    return {name for name in db.table_names() if not name.startswith("sqlite_")}


def plugin_modules() -> list[tuple[str, ast.Module]]:
    return [
        (str(path.relative_to(ROOT)), ast.parse(path.read_text("utf-8"), str(path)))
        for path in sorted(PLUGINS.rglob("*.py"))
    ]


def imported(tree: ast.Module) -> list[str]:
    """The absolute names of every module a file imports, at any depth.

    ``from package import name`` counts as ``package.name`` when that is a public module
    (``from bothost import jsondecode``), else as ``package``.
    """
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                names.append(full if full in PUBLIC or node.module == "bothost" else node.module)
    return names


def private_imports(tree: ast.Module) -> list[str]:
    return [
        name
        for name in dict.fromkeys(imported(tree))
        if (name == "bothost" or name.startswith("bothost."))
        and not name.startswith("bothost.plugins.")
        and name not in PUBLIC
    ]


def docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def table_mentions(tree: ast.Module, tables: set[str]) -> list[str]:
    """Strings that name a core table: in SQL, or as ``db["name"]`` / ``db.table("name")``."""
    names = "|".join(sorted(map(re.escape, tables)))
    sql = re.compile(rf"\b{SQL_VERBS}\s+[\"'`\[]?(?:main\.)?({names})\b", re.IGNORECASE)
    skip = docstrings(tree)
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            hits += [f"line {node.lineno}: {m.group(0)!r}" for m in sql.finditer(node.value)]
        if isinstance(node, ast.Subscript) and is_db(node.value):
            hits += named(node.slice, tables)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "table"
            and node.args
        ):
            hits += named(node.args[0], tables)
    return sorted(hits, key=lambda hit: int(hit.split(":")[0].removeprefix("line ")))


def is_db(node: ast.expr) -> bool:
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return name in ("db", "database")


def named(node: ast.expr, tables: set[str]) -> list[str]:
    if isinstance(node, ast.Constant) and node.value in tables:
        return [f"line {node.lineno}: table {node.value!r}"]
    return []


def untyped_hosts(tree: ast.Module) -> list[str]:
    """``host: Any`` (an argument or attribute): plugins get the typed ``HostApi``."""
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.arg == "host":
            annotation = node.annotation
        elif isinstance(node, ast.AnnAssign):
            target = node.target
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            annotation = node.annotation if name == "host" else None
        else:
            continue
        if annotation is None and isinstance(node, ast.arg):
            hits.append(f"line {node.lineno}: host without a type")
        elif annotation is not None and "Any" in ast.unparse(annotation):
            hits.append(f"line {node.lineno}: host: {ast.unparse(annotation)}")
    return hits


def test_core_tables_come_from_the_core_migrations():
    tables = core_tables()
    assert {
        "sessions",
        "messages",
        "tool_calls",
        "events",
        "ticks",
        "deliveries",
        "briefings",
        "mcp_servers",
        "mcp_grants",
        "approvals",
        "mutes",
    } <= tables
    assert "web_briefings" not in tables  # the web plugin's own table


def test_plugins_import_only_public_core_modules():
    found = {path: bad for path, tree in plugin_modules() if (bad := private_imports(tree))}
    assert found == {}, f"plugins import core-private modules (public: {sorted(PUBLIC)})"


def test_plugins_name_no_core_table():
    tables = core_tables()
    found = {
        path: hits for path, tree in plugin_modules() if (hits := table_mentions(tree, tables))
    }
    assert found == {}, "plugins run SQL on core tables; use host.queries"


def test_plugins_type_the_host():
    found = {path: hits for path, tree in plugin_modules() if (hits := untyped_hosts(tree))}
    assert found == {}, "plugins take the host as bothost.api.HostApi"


def test_the_checks_catch_what_they_look_for():
    tables = core_tables()
    tree = ast.parse(
        '"""Docs may say: read from events."""\n'
        "from bothost.store import Store\n"
        "from bothost import host, models\n"
        "import bothost.events.queue\n"
        "from bothost.agent import tools, history, spill\n"
        "def f(db, host: Any, ids):\n"
        '    db.execute(f"SELECT 1 FROM events WHERE id IN ({ids})")\n'
        '    db.execute("insert into  `mutes` (x) values (1)")\n'
        '    rows = db["sessions"].rows\n'
        '    return db.table("ticks"), response.get("messages"), db["web_briefings"]\n'
    )
    assert private_imports(tree) == [
        "bothost.store",
        "bothost.host",
        "bothost.events.queue",
        "bothost.agent",
    ]
    assert [hit.split(": ", 1)[1] for hit in table_mentions(tree, tables)] == [
        "'FROM events'",
        "'into  `mutes'",
        "table 'sessions'",
        "table 'ticks'",
    ]
    assert untyped_hosts(tree) == ["line 6: host: Any"]
