"""The core never imports a plugin: plugins depend on the core, never the reverse.

Only :mod:`bothost.discovery` names the first-party plugins, as strings it imports by name
when it loads them; every other module under ``bothost/`` reaches a plugin only through
hooks and registered objects.
"""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "bothost"
PLUGIN_PACKAGE = "bothost.plugins"


def imported(tree: ast.Module) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
            if node.module == "bothost":  # `from bothost import plugins`
                names += [f"bothost.{alias.name}" for alias in node.names]
    return names


def test_no_core_module_imports_a_plugin():
    offenders = []
    for path in sorted(CORE.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"), str(path))
        for name in imported(tree):
            if name == PLUGIN_PACKAGE or name.startswith(PLUGIN_PACKAGE + "."):
                offenders.append(f"{path.relative_to(CORE.parent)} imports {name}")
    assert offenders == []
