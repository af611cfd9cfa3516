"""Every CLI failure a user can cause ends in one line on stderr and the documented status.

Each case runs the real ``bothost`` command in a subprocess and checks: the exit status
(2 for a config error, 1 otherwise), stderr is exactly one line, no traceback — and with
``-v`` the traceback is there for whoever debugs it.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
import yaml

from bothost.store import Store, core_migrations
from tests.helpers import run_bothost

QUIET = (
    "platforms: {web: {port: 0}, console: {enabled: false}}\n"
    "mcp: {servers: {weather: {enabled: false}}}\n"
)
COMMAND_TIMEOUT = 60  # the alias bomb hung for minutes before it was bounded
CORE_SCHEMA = max(m.number for m in core_migrations())  # the newest core schema this build knows


def bothost(*args: str, home: Path, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    return run_bothost(*args, home=home, timeout=COMMAND_TIMEOUT, prefix=prefix)


def no_overrides() -> tuple[str, ...]:
    """A prefix that makes file permissions apply to the command even when we run as root."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: permissions would not apply")
    return (setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner")


def assert_one_line(
    args: list[str], home: Path, status: int, *, contains: str = "", prefix: tuple[str, ...] = ()
) -> str:
    """Run the command plain and with -v; return the one line it printed."""
    result = bothost(*args, home=home, prefix=prefix)
    err = result.stderr.rstrip("\n")
    assert result.returncode == status, (result.returncode, result.stderr, result.stdout)
    assert err and "\n" not in err, result.stderr
    assert "Traceback" not in err
    assert err.startswith("bothost: "), err
    assert contains in err, err
    verbose = bothost("-v", *args, home=home, prefix=prefix)
    assert verbose.returncode == status, verbose.stderr
    assert "Traceback (most recent call last)" in verbose.stderr
    return err


def config_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(QUIET + text)
    return str(path)


# --- config errors known only to plugins (exit 2) --------------------------------------------


@pytest.mark.parametrize(
    "command",
    [["config", "show"], ["doctor"], ["chat", "-m", "hi"], ["tick"], ["mcp", "list"], ["run"]],
)
def test_unknown_llm_provider_is_a_config_error(tmp_path, home, command):
    config = config_file(tmp_path, "llm: {provider: opnai}\n")
    line = assert_one_line(
        ["--config", config, *command],
        home,
        2,
        contains=f"{config}: llm.provider: unknown provider 'opnai'",
    )
    assert "did you mean 'openai'" in line
    assert not (home / "bothost.db").exists()  # a config error writes nothing


@pytest.mark.parametrize("command", [["config", "show"], ["doctor"], ["tick"]])
def test_bad_tick_rule_is_a_config_error(tmp_path, home, command):
    config = config_file(tmp_path, "tick: {rules: [{match: {sender: x}, priority: high}]}\n")
    assert_one_line(
        ["--config", config, *command],
        home,
        2,
        contains=f"{config}: tick.rules[0].match: unknown match key 'sender'",
    )


@pytest.mark.parametrize("command", [["config", "show"], ["doctor"], ["tick"]])
def test_unknown_deliver_to_platform_is_a_config_error(tmp_path, home, command):
    config = config_file(tmp_path, "tick: {deliver_to: ['web:briefings', 'slak:C1']}\n")
    line = assert_one_line(
        ["--config", config, *command],
        home,
        2,
        contains=f"{config}: tick.deliver_to[1]: no platform 'slak'",
    )
    assert "did you mean 'slack'" in line


# found from outside: these loaded and `doctor` said ok, but the web platform refuses such
# session names everywhere else (a page cannot open "..", "a/b" or an empty session)
@pytest.mark.parametrize("target", ["web:..", "web:", "web:a/b"])
def test_a_web_target_the_web_platform_refuses_is_a_config_error(tmp_path, home, target):
    config = config_file(tmp_path, f"tick: {{deliver_to: ['console:', '{target}']}}\n")
    assert_one_line(
        ["--config", config, "doctor"],
        home,
        2,
        contains=f"{config}: tick.deliver_to[1]: {target!r}: a web session must be 1-64",
    )


def test_deliver_to_console_and_registered_platforms_pass(tmp_path, home):
    config = tmp_path / "c.yaml"
    config.write_text(
        "platforms: {web: {port: 0}, console: {enabled: false},"
        " webhook: {targets: {ops: {url: 'https://ops.example/in'}}}}\n"
        "mcp: {servers: {weather: {enabled: false}}}\n"
        "tick: {deliver_to: ['console:', 'web:briefings', 'slack:C1', 'webhook:ops']}\n"
    )
    result = bothost("--config", config, "config", "show", home=home)
    assert result.returncode == 0, result.stderr


def test_plugin_error_names_the_file_of_the_home_config(tmp_path, home):
    (home / "bothost.yaml").write_text("llm: {provider: opnai}\n")
    config = config_file(tmp_path, "")
    assert_one_line(
        ["--config", config, "config", "show"],
        home,
        2,
        contains=f"{home / 'bothost.yaml'}: llm.provider",
    )


# --- unreadable config files (exit 2) ------------------------------------------------------


def test_config_with_invalid_utf8(tmp_path, home):
    path = tmp_path / "c.yaml"
    path.write_bytes(b'llm: {model: "\xff\xfe"}\n')
    assert_one_line(
        ["--config", str(path), "config", "show"], home, 2, contains=f"{path}: not valid UTF-8"
    )


def test_config_from_dev_zero_is_refused_by_size(home):
    assert_one_line(
        ["--config", "/dev/zero", "config", "show"], home, 2, contains="/dev/zero: larger than"
    )


def test_config_over_the_size_cap(tmp_path, home):
    path = tmp_path / "big.yaml"
    path.write_text("# padding\n" * 200_000)
    assert_one_line(
        ["--config", str(path), "config", "show"], home, 2, contains=f"{path}: larger than"
    )


def test_yaml_alias_bomb_is_refused(tmp_path, home):
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{','.join(['*' + prev] * 9)}]")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    assert_one_line(
        ["--config", str(path), "config", "show"], home, 2, contains=f"{path}: too many values"
    )


def test_recursive_yaml_alias_is_refused(tmp_path, home):
    path = tmp_path / "loop.yaml"
    path.write_text("plugins: {dirs: &a [*a]}\n")
    assert_one_line(["--config", str(path), "config", "show"], home, 2, contains=f"{path}: ")


def test_deeply_nested_yaml_is_refused(tmp_path, home):
    path = tmp_path / "deep.yaml"
    path.write_text("a: " + "[" * 50_000 + "]" * 50_000 + "\n")
    assert_one_line(["--config", str(path), "config", "show"], home, 2, contains=f"{path}: ")


def test_anchors_within_bounds_still_work(tmp_path, home):
    path = tmp_path / "c.yaml"
    path.write_text(QUIET + "tick: {deliver_to: &t ['web:briefings']}\nplugins: {disabled: *t}\n")
    result = bothost("--config", str(path), "config", "show", "--json", home=home)
    assert result.returncode == 0, result.stderr


# --- the database (exit 1) ------------------------------------------------------------------


def make_db(home: Path) -> Path:
    path = home / "bothost.db"
    store = Store(path, core_migrations())
    store.call(
        lambda db: [
            db.insert(
                "events",
                {
                    "source": "s",
                    "type": "t",
                    "payload": json.dumps({"pad": "x" * 500}),
                    "received_at": 1.0,
                    "dedupe_key": f"k{i}",
                },
            )
            for i in range(200)
        ]
    )
    store.close()  # the last connection checkpoints the WAL into the file
    return path


def test_garbage_database(home):
    (home / "bothost.db").write_bytes(os.urandom(8192))
    assert_one_line(["events", "list"], home, 1, contains="is not a SQLite database")


def test_truncated_database(home):
    path = make_db(home)
    with path.open("r+b") as f:
        f.truncate(6000)
    assert_one_line(["events", "list"], home, 1, contains=f"{path}: ")


def test_directory_at_the_database_path(home):
    (home / "bothost.db").mkdir()
    assert_one_line(["events", "list"], home, 1, contains="is a directory")


@pytest.mark.parametrize("command", [["events", "list"], ["events", "push", "a", "b", "{}"]])
def test_read_only_database(home, command):
    path = make_db(home)
    path.chmod(0o444)
    assert_one_line(command, home, 1, contains=f"{path}: read-only", prefix=no_overrides())


def test_database_from_a_newer_bothost_migration_record(home):
    path = make_db(home)
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO _migrations VALUES ('core', 99, 'from the future', 0)")
    conn.close()
    before = path.read_bytes()
    line = assert_one_line(
        ["events", "list"],
        home,
        1,
        contains=f"created by a newer bothost (schema 99, this one knows {CORE_SCHEMA}); upgrade",
    )
    assert str(path) in line
    assert path.read_bytes() == before  # never migrated down or used


def test_database_from_a_newer_bothost_user_version(home):
    path = make_db(home)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    conn.close()
    assert_one_line(["tick"], home, 1, contains="created by a newer bothost (schema 99")


# --- the home directory (exit 1) ------------------------------------------------------------


def test_home_that_cannot_be_created(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert_one_line(["events", "list"], blocker / "home", 1, contains=f"{blocker / 'home'}")


def test_home_under_an_unwritable_directory(tmp_path):
    parent = tmp_path / "locked"
    parent.mkdir()
    parent.chmod(0o500)
    try:
        assert_one_line(
            ["events", "list"],
            parent / "home",
            1,
            contains=str(parent / "home"),
            prefix=no_overrides(),
        )
    finally:
        parent.chmod(0o700)


@pytest.mark.parametrize(("mode", "problem"), [(0o755, "not writable"), (0o500, "not readable")])
def test_home_of_another_user(tmp_path, mode, problem):
    if os.geteuid() != 0:
        pytest.skip("needs root to hand the directory to another user")
    home = tmp_path / "home"
    home.mkdir(mode=mode)
    os.chown(home, 65534, 65534)
    assert_one_line(
        ["events", "list"], home, 1, contains=f"{home}: {problem}", prefix=no_overrides()
    )


def test_valid_config_still_runs(tmp_path, home):
    config = config_file(
        tmp_path, "tick: {rules: [{match: {payload.from: '*@corp'}, priority: high}]}\n"
    )
    result = bothost("--config", config, "tick", home=home)
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(bothost("--config", config, "config", "show", home=home).stdout)


def test_an_unexpected_error_is_one_line_too(tmp_path, home):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "broken_command.py").write_text(
        "import click\n"
        "from bothost.hookspecs import hookimpl\n\n"
        "@hookimpl\n"
        "def register_commands(cli):\n"
        "    @cli.command('explode')\n"
        "    def explode():\n"
        "        raise KeyError('the bug')\n"
    )
    config = config_file(tmp_path, f"plugins: {{dirs: ['{plugins}']}}\n")
    assert_one_line(
        ["--config", config, "explode"],
        home,
        1,
        contains="unexpected KeyError (bothost -v COMMAND shows where): 'the bug'",
    )


# --- what a new user gets wrong in a config (exit 2, the file and key path named) -----------

UNSET = "BOTHOST_TEST_NEVER_SET"


@pytest.mark.parametrize("where", ["home", "--config"])
def test_an_unset_env_names_the_file_that_set_it(tmp_path, home, where):
    text = f"llm: {{provider: openai, model: m, api_key: '${{env:{UNSET}}}'}}\n"
    if where == "home":
        (home / "bothost.yaml").write_text(text)
        args, path = ["chat", "-m", "hi"], home / "bothost.yaml"
    else:
        path = Path(config_file(tmp_path, text))
        args = ["--config", str(path), "chat", "-m", "hi"]
    assert_one_line(
        args, home, 2, contains=f"{path}: llm.api_key: environment variable {UNSET} is not set"
    )
    assert not (home / "bothost.db").exists()  # nothing half-started


def test_an_unset_env_in_a_plugin_section_names_the_file(tmp_path, home):
    config = tmp_path / "c.yaml"
    config.write_text(
        "platforms:\n  console: {enabled: false}\n"
        f"  slack: {{enabled: true, bot_token: '${{env:{UNSET}}}', app_token: x}}\n"
    )
    assert_one_line(
        ["--config", str(config), "config", "show"],
        home,
        2,
        contains=f"{config}: platforms.slack.bot_token: environment variable {UNSET} is not set",
    )


@pytest.mark.parametrize("value", ["${env:}", "${envOPENAI_KEY}", "${env:OPENAI KEY}", "${env:X"])
def test_a_malformed_env_reference_is_a_config_error(tmp_path, home, value):
    """Taken literally, the text would be sent as the API key."""
    config = config_file(tmp_path, f"llm: {{provider: openai, model: m, api_key: '{value}'}}\n")
    line = assert_one_line(
        ["--config", config, "config", "show"], home, 2, contains=f"{config}: llm.api_key: "
    )
    assert "${env:NAME}" in line


def test_a_key_written_twice_is_a_config_error(tmp_path, home):
    """YAML loaders keep the last silently: the first block would be ignored unseen."""
    config = config_file(tmp_path, "llm:\n  provider: openai\nllm:\n  provider: offline\n")
    line = assert_one_line(["--config", config, "config", "show"], home, 2, contains=config)
    assert "'llm'" in line and "twice" in line and "line 5" in line  # QUIET is two lines


def test_invalid_yaml_names_line_and_column_without_parser_noise(tmp_path, home):
    config = config_file(tmp_path, "llm:\n  provider: [openai\n")
    line = assert_one_line(["--config", config, "config", "show"], home, 2, contains=config)
    assert "<unicode string>" not in line
    assert "line 4, column 13" in line, line


@pytest.mark.parametrize("command", [["config", "show"], ["doctor"], ["run"]])
def test_a_port_out_of_range_is_a_config_error(tmp_path, home, command):
    config = tmp_path / "c.yaml"
    config.write_text("platforms: {web: {port: 99999}, console: {enabled: false}}\n")
    assert_one_line(
        ["--config", str(config), *command],
        home,
        2,
        contains=f"{config}: platforms.web.port: expected 0 to 65535, got 99999",
    )


# found from outside (issue 34): doctor said ok (exit 0) and run exited 1 after opening the
# database; both are the one check now, a config error before anything is written
@pytest.mark.parametrize("command", [["doctor"], ["doctor", "--offline"], ["run"]])
def test_a_non_loopback_bind_without_a_token_is_a_config_error(tmp_path, home, command):
    config = tmp_path / "c.yaml"
    config.write_text(QUIET.replace("port: 0", "host: 0.0.0.0, port: 0"))
    assert_one_line(
        ["--config", str(config), *command],
        home,
        2,
        contains=f"config error: {config}: platforms.web.host: binding 0.0.0.0 (not loopback) "
        "requires platforms.web.token",
    )
    assert not (home / "bothost.db").exists()  # a config error writes nothing


@pytest.mark.parametrize(
    "args",
    [
        # found from outside: "unexpected OverflowError" / "unexpected ValueError"
        ["events", "list", "--limit", "99999999999999999999"],
        ["briefings", "--limit", "99999999999999999999"],
        ["mcp", "logs", "weather", "-n", "-5"],
        ["mcp", "logs", "weather", "-n", "99999999999999999999"],
        # found from outside: "No events." for a negative limit
        ["events", "list", "--limit", "-3"],
        ["briefings", "--limit", "0"],
        # found from outside: the server was started, then "timed out after nan s" (exit 1)
        ["mcp", "call", "weather", "status", "--timeout", "-1"],
        ["mcp", "call", "weather", "status", "--timeout", "nan"],
        ["mcp", "call", "weather", "status", "--timeout", "0"],
        # found from outside: accepted and stored, a call that effectively never timed out
        ["mcp", "add", "x", "--timeout", "99999999999999999999d", "--", "echo"],
        ["mcp", "add", "x", "--max-timeout", "2d", "--", "echo"],
        ["mcp", "add", "x", "--timeout", "-1", "--", "echo"],
    ],
)
def test_a_number_option_out_of_range_is_a_usage_error(home, args):
    from click.testing import CliRunner

    from bothost.cli import cli

    result = CliRunner().invoke(cli, ["--home", str(home), *args])
    assert result.exit_code == 2, (result.output, result.exception)
    assert "Invalid value" in result.output
    if args[:2] == ["mcp", "add"] and args[-3].endswith("d"):  # the value, before "--"
        assert "at most 1d" in result.output, result.output


@pytest.mark.parametrize("key", ["timeout", "max_timeout"])
def test_an_mcp_timeout_beyond_a_day_is_a_config_error(tmp_path, home, key):
    config = tmp_path / "c.yaml"
    config.write_text(
        "platforms: {web: {port: 0}, console: {enabled: false}}\n"
        f"mcp: {{servers: {{w: {{command: echo, {key}: 2d}}}}}}\n"
    )
    assert_one_line(
        ["--config", str(config), "config", "show"],
        home,
        2,
        contains=f"{config}: mcp.servers.w.{key}: expected at most 1d (86400 s)",
    )
