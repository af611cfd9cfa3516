import json
import textwrap

import pytest

from bothost.hooks.discovery import DiscoveryError, load_plugins, new_plugin_manager
from tests.helpers import run_bothost

TOOL_PLUGIN = textwrap.dedent('''
    from bothost.hookspecs import hookimpl

    def shout(text: str) -> str:
        """Upper-case some text."""
        return text.upper()

    @hookimpl
    def register_tools(register):
        register(shout)
''')


def names(infos):
    return {i.name: i for i in infos}


def test_first_party_plugins_load():
    infos = names(load_plugins(new_plugin_manager()))
    assert infos["builtin_tools"].origin == "first-party"
    assert "register_tools" in infos["builtin_tools"].hooks
    assert "register_platforms" in infos["console"].hooks


def test_directory_plugins_module_and_package(tmp_path):
    (tmp_path / "shouter.py").write_text(TOOL_PLUGIN)
    package = tmp_path / "pkgplugin"
    package.mkdir()
    (package / "__init__.py").write_text("from .impl import *\n")
    (package / "impl.py").write_text(TOOL_PLUGIN.replace("shout", "whisper"))
    pm = new_plugin_manager()
    infos = names(load_plugins(pm, [str(tmp_path)]))
    assert infos["shouter"].origin.startswith("dir:") and infos["shouter"].hooks == [
        "register_tools"
    ]
    assert infos["pkgplugin"].hooks == ["register_tools"]


def test_disabled_blocks_first_party_and_directory(tmp_path):
    (tmp_path / "shouter.py").write_text(TOOL_PLUGIN)
    pm = new_plugin_manager()
    infos = names(load_plugins(pm, [str(tmp_path)], ["console", "shouter"]))
    assert infos["console"].disabled and infos["shouter"].disabled
    assert pm.get_plugin("console") is None and pm.get_plugin("shouter") is None


def test_broken_third_party_plugin_is_reported_and_skipped(tmp_path):
    (tmp_path / "broken.py").write_text("raise RuntimeError('boom at import')\n")
    (tmp_path / "shouter.py").write_text(TOOL_PLUGIN)
    infos = names(load_plugins(new_plugin_manager(), [str(tmp_path)]))
    assert "boom at import" in infos["broken"].error
    assert infos["shouter"].error is None


def test_misspelled_hook_fails_loudly(tmp_path):
    (tmp_path / "typo.py").write_text(
        textwrap.dedent("""
        from bothost.hookspecs import hookimpl

        @hookimpl
        def register_tool(register):
            pass
    """)
    )
    with pytest.raises(DiscoveryError, match="typo.*register_tool"):
        load_plugins(new_plugin_manager(), [str(tmp_path)])


def test_entry_point_plugins(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    (site / "ep_shouter.py").write_text(TOOL_PLUGIN)
    dist = site / "ep_shouter-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ep-shouter\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[bothost]\nshouter = ep_shouter\n")
    monkeypatch.syspath_prepend(str(site))
    infos = names(load_plugins(new_plugin_manager()))
    assert infos["shouter"].origin == "entry-point:ep-shouter"
    assert infos["shouter"].hooks == ["register_tools"]


def bothost(home, *args):
    return run_bothost(*args, home=home, timeout=60)


def test_directory_tool_listed_and_callable_from_the_cli(tmp_path, home):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "shouter.py").write_text(TOOL_PLUGIN)
    config = tmp_path / "c.yaml"
    config.write_text(
        f"plugins: {{dirs: ['{plugins}']}}\nmcp: {{servers: {{weather: {{enabled: false}}}}}}\n"
    )
    tools = bothost(home, "--config", str(config), "chat", "-m", "tools")
    assert tools.returncode == 0 and "shout — Upper-case some text." in tools.stdout
    called = bothost(home, "--config", str(config), "chat", "-m", 'call shout {"text": "hi there"}')
    assert called.returncode == 0 and "HI THERE" in called.stdout
    listed = json.loads(bothost(home, "--config", str(config), "plugins", "--json").stdout)
    assert any(p["name"] == "shouter" and p["hooks"] == ["register_tools"] for p in listed)


def test_plugins_lists_mcp_servers_as_plugins(home):
    listed = json.loads(bothost(home, "plugins", "--json").stdout)
    by_name = {p["name"]: p for p in listed}
    assert (
        by_name["mcp:weather"]["origin"] == "mcp:config" and not by_name["mcp:weather"]["disabled"]
    )
    assert by_name["mcp:gmail"]["disabled"]
