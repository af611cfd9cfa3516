"""Config sections owned by plugins: declared through ``register_config``, checked at load.

A third-party platform in ``plugins.dirs`` declares ``platforms.discord``; the section is
validated with the same one-line errors as core keys (file, key path, what was expected),
masked in ``config show``, and handed to the platform when the host starts it.
"""

from __future__ import annotations

import asyncio
import json
import signal
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from bothost.cli import cli
from bothost.config import ConfigError, load
from tests.core.test_cli_errors import QUIET, assert_one_line, bothost
from tests.helpers import bothost_process, make_host, until

TOKEN = "discord-canary-5f1e0c9a"  # a value that must never show in `config show`

DISCORD = textwrap.dedent('''
    """A third-party Discord platform: its own config section, its own doctor check."""

    import json
    from dataclasses import dataclass, field

    from bothost.hookspecs import hookimpl


    @dataclass
    class DiscordConfig:
        enabled: bool = False
        token: str | None = None
        guilds: list[str] = field(default_factory=list)
        reconnect: float = 30.0
        mode: str = "gateway"
        invite: str | None = None  # not secret by its name, so the schema says so

        CHOICES = {"mode": ("gateway", "interactions")}
        DURATIONS = ("reconnect",)
        SECRETS = ("invite",)


    class DiscordPlatform:
        name = "discord"

        def __init__(self):
            self.config = None

        def enabled(self, host):
            return host.config.platforms.discord.enabled

        async def start(self, host):
            self.config = host.config.platforms.discord
            started = {"token": self.config.token, "guilds": self.config.guilds,
                       "reconnect": self.config.reconnect}
            (host.home / "discord-started.json").write_text(json.dumps(started))

        async def stop(self):
            pass

        async def send(self, address, text, **kwargs):
            return None

        async def send_briefing(self, address, briefing):
            return None

        async def ask(self, address, question):
            return None


    @hookimpl
    def register_config(register):
        register("platforms.discord", DiscordConfig)


    @hookimpl
    def register_platforms(register):
        register(DiscordPlatform())


    @hookimpl
    def doctor_checks(config, offline, report):
        section = config.platforms.discord
        if section.enabled and not section.guilds:
            report("discord", False, "no guilds listed", "set platforms.discord.guilds")
''')


@pytest.fixture
def plugin_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "plugins"
    directory.mkdir()
    (directory / "discord.py").write_text(DISCORD)
    return directory


def config_text(plugin_dir: Path, discord: str, more: str = "") -> str:
    platforms = QUIET.splitlines()[0].removesuffix("}")  # the same platforms mapping
    return (
        f"{platforms}, discord: {discord}{more}}}\n" + QUIET.splitlines()[1] + "\n"
        f"plugins: {{dirs: ['{plugin_dir}']}}\n"
    )


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_plugin_section_is_typed_and_defaults_fill_in(home, tmp_path, plugin_dir):
    path = write(
        tmp_path / "c.yaml", config_text(plugin_dir, "{enabled: true, token: t1, reconnect: 2m}")
    )
    config = load(path, home)
    discord = config.platforms.discord
    assert (discord.enabled, discord.token, discord.reconnect) == (True, "t1", 120.0)
    assert discord.guilds == [] and discord.mode == "gateway"
    assert config.http.port == 0  # the first-party sections still read the same


@pytest.mark.parametrize(
    "discord,path,expected",
    [
        ("{enabled: 'yes'}", "platforms.discord.enabled", "expected true or false, got 'yes'"),
        ("{guilds: one}", "platforms.discord.guilds", "expected a list of strings"),
        ("{reconnect: soon}", "platforms.discord.reconnect", "a duration"),
        ("{mode: voice}", "platforms.discord.mode", "one of gateway, interactions"),
        ("{tokn: x}", "platforms.discord.tokn", "did you mean 'token'"),
        ("[1, 2]", "platforms.discord", "expected a mapping"),
    ],
)
def test_a_wrong_plugin_value_names_file_and_key_path(
    home, tmp_path, plugin_dir, discord, path, expected
):
    bad = write(tmp_path / "bad.yaml", config_text(plugin_dir, discord))
    with pytest.raises(ConfigError) as err:
        load(bad, home)
    assert f"{bad}: {path}" in str(err.value) and expected in str(err.value)


def test_the_error_names_the_source_that_set_the_value(home, tmp_path, plugin_dir):
    (home / "bothost.yaml").write_text("platforms: {discord: {enabled: 3}}\n")
    config = write(tmp_path / "c.yaml", config_text(plugin_dir, "{token: x}"))
    with pytest.raises(ConfigError, match=f"{home / 'bothost.yaml'}: platforms.discord.enabled"):
        load(config, home)


def test_an_undeclared_platform_section_is_still_an_error(home, tmp_path, plugin_dir):
    platforms = QUIET.splitlines()[0].removesuffix("}")  # one platforms mapping, not two
    bad = write(
        tmp_path / "c.yaml",
        f"{platforms}, discord: {{enabled: true}}}}\n" + QUIET.splitlines()[1] + "\n",
    )
    with pytest.raises(ConfigError) as err:
        load(bad, home)
    assert f"{bad}: platforms.discord: unknown key" in str(err.value)
    typo = write(tmp_path / "t.yaml", config_text(plugin_dir, "{}", ", discrod: {}"))
    with pytest.raises(ConfigError, match="platforms.discrod: unknown key; did you mean 'discord'"):
        load(typo, home)


def test_a_top_level_section_and_an_unknown_top_level_key(home, tmp_path):
    (tmp_path / "pager.py").write_text(
        textwrap.dedent("""
        from dataclasses import dataclass
        from bothost.hookspecs import hookimpl

        @dataclass
        class PagerConfig:
            url: str = "https://pager.invalid/"
            retries: int = 3

        @hookimpl
        def register_config(register):
            register("pager", PagerConfig)
    """)
    )
    dirs = f"plugins: {{dirs: ['{tmp_path}']}}\n"
    config = load(write(tmp_path / "c.yaml", QUIET + dirs + "pager: {retries: 5}\n"), home)
    assert config.section("pager").retries == 5
    bad = write(tmp_path / "b.yaml", QUIET + dirs + "pager: {retries: many}\n")
    with pytest.raises(ConfigError, match=f"{bad}: pager.retries: expected an integer"):
        load(bad, home)
    typo = write(tmp_path / "t.yaml", QUIET + dirs + "pagr: {}\n")
    with pytest.raises(ConfigError, match=f"{typo}: pagr: unknown key; did you mean 'pager'"):
        load(typo, home)


def test_unset_env_in_a_disabled_plugin_section_is_no_error(
    home, tmp_path, plugin_dir, monkeypatch
):
    monkeypatch.delenv("NO_DISCORD_TOKEN", raising=False)
    off = write(tmp_path / "a.yaml", config_text(plugin_dir, "{token: '${env:NO_DISCORD_TOKEN}'}"))
    assert load(off, home).platforms.discord.token is None
    on = write(
        tmp_path / "b.yaml",
        config_text(plugin_dir, "{enabled: true, token: '${env:NO_DISCORD_TOKEN}'}"),
    )
    with pytest.raises(
        ConfigError,
        match="platforms.discord.token: environment variable NO_DISCORD_TOKEN is not set",
    ):
        load(on, home)


def test_two_plugins_cannot_own_one_section(home, tmp_path, plugin_dir):
    (plugin_dir / "copycat.py").write_text(
        textwrap.dedent("""
        from dataclasses import dataclass
        from bothost.hookspecs import hookimpl

        @dataclass
        class Other:
            enabled: bool = False

        @hookimpl
        def register_config(register):
            register("platforms.discord", Other)
    """)
    )
    path = write(tmp_path / "c.yaml", config_text(plugin_dir, "{}"))
    result = bothost("--config", str(path), "config", "show", home=home)
    assert result.returncode == 2, result.stderr
    assert "platforms.discord" in result.stderr and "copycat" in result.stderr


@pytest.mark.parametrize(
    "command", [["config", "show"], ["doctor"], ["run"], ["tick"], ["chat", "-m", "hi"]]
)
def test_every_command_refuses_a_wrong_plugin_value(home, tmp_path, plugin_dir, command):
    config = write(tmp_path / "c.yaml", config_text(plugin_dir, "{enabled: 'yes'}"))
    assert_one_line(
        ["--config", str(config), *command],
        home,
        2,
        contains=f"{config}: platforms.discord.enabled: expected true or false",
    )
    assert not (home / "bothost.db").exists()  # a config error writes nothing


def test_config_show_masks_the_plugin_section(home, tmp_path, plugin_dir):
    config = write(
        tmp_path / "c.yaml",
        config_text(
            plugin_dir, f"{{enabled: true, token: {TOKEN}, guilds: [g1], invite: {TOKEN}-i}}"
        ),
    )
    result = CliRunner().invoke(
        cli, ["--config", str(config), "config", "show", "--json"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["platforms"]["discord"] == {
        "enabled": True,
        "token": "***",
        "guilds": ["g1"],
        "invite": "***",
    }
    assert TOKEN not in result.output


async def test_the_host_starts_the_platform_with_its_section(home, tmp_path, plugin_dir):
    host = make_host(
        home,
        {
            "plugins": {"dirs": [str(plugin_dir)]},
            "platforms": {"discord": {"enabled": True, "token": TOKEN}},
        },
    )
    await host.start(serve_http=False, mcp=False, tick=False)
    try:
        assert "discord" in host.active
        assert host.active["discord"].config.token == TOKEN
    finally:
        await host.stop()


async def test_bothost_run_starts_the_platform_with_its_section(home, tmp_path, plugin_dir):
    config = write(
        tmp_path / "c.yaml",
        config_text(plugin_dir, f"{{enabled: true, token: {TOKEN}, guilds: [g1], reconnect: 5s}}"),
    )
    process = await bothost_process(home, config, "run", stdout=asyncio.subprocess.DEVNULL)
    try:
        async with asyncio.timeout(60):
            while b"bothost is running" not in await process.stderr.readline():
                assert not process.stderr.at_eof()
        await until(lambda: (home / "discord-started.json").exists())
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 30)
    started = json.loads((home / "discord-started.json").read_text())
    assert started == {"token": TOKEN, "guilds": ["g1"], "reconnect": 5.0}


def test_doctor_runs_the_plugins_checks(home, tmp_path, plugin_dir):
    config = write(tmp_path / "c.yaml", config_text(plugin_dir, "{enabled: true, token: t}"))
    result = bothost("--config", str(config), "doctor", "--offline", home=home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "!!  discord: no guilds listed" in result.stdout
    assert "fix: set platforms.discord.guilds" in result.stdout


def test_a_section_of_a_disabled_plugin_is_refused_with_a_hint(home, tmp_path):
    base = QUIET + "plugins: {disabled: [slack]}\n"
    assert "slack" not in load(write(tmp_path / "ok.yaml", base), home).platforms  # default ok
    bad = write(tmp_path / "c.yaml", base.replace("console:", "slack: {enabled: false}, console:"))
    with pytest.raises(ConfigError) as err:
        load(bad, home)
    assert f"{bad}: platforms.slack: unknown key" in str(err.value)
    assert "is its plugin disabled" in str(err.value)
