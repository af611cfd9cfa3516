"""The core never imports a plugin: plugins depend on the core, never the reverse.

Only :mod:`bothost.hooks.discovery` names the first-party plugins, as strings it imports by name
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


def test_chat_without_the_console_plugin_says_so(home, tmp_path):
    from tests.core.test_cli_errors import assert_one_line

    config = tmp_path / "c.yaml"
    config.write_text(
        "plugins: {disabled: [console]}\nmcp: {servers: {weather: {enabled: false}}}\n"
    )
    assert_one_line(
        ["--config", str(config), "chat", "-m", "hi"],
        home,
        2,
        contains="bothost chat talks through the console plugin",
    )


async def test_without_the_web_plugin_the_host_runs_and_listens_nowhere(home, tmp_path):
    from bothost.config import load
    from bothost.hooks.discovery import load_plugins, new_plugin_manager
    from bothost.host.host import Host

    config_file = tmp_path / "c.yaml"
    config_file.write_text(
        "plugins: {disabled: [web]}\n"
        "platforms: {console: {enabled: false}}\n"
        "tick: {deliver_to: ['console:']}\n"
        "mcp: {servers: {weather: {enabled: false}}}\n"
    )
    config = load(config_file, home)
    assert config.platforms.get("web") is None and "console" in config.platforms
    pm = new_plugin_manager()
    load_plugins(pm, config.plugins.dirs, config.plugins.disabled)
    host = Host(config, home, pm)
    await host.start(mcp=False, tick=False)
    try:
        assert host.http.port is None
    finally:
        await host.stop()
