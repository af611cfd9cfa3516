import json
import os

import pytest

from bothost.config import ConfigError, mask_secrets
from bothost.host.config_load import load  # with the domains' checks, as every command loads
from tests.helpers import run_bothost


def write(path, text):
    path.write_text(text)
    return path


def test_packaged_default_is_offline_with_weather(home):
    config = load(home=home)
    assert config.llm.provider == "offline"
    assert config.http.port == 8765 and config.http.host == "127.0.0.1"
    assert config.platforms.web.enabled
    assert config.mcp.servers["weather"].enabled
    assert not config.mcp.servers["gmail"].enabled
    assert config.tick.deliver_to == ["web:briefings"]


def test_sources_merge_in_order(home, tmp_path):
    write(
        home / "bothost.yaml",
        "agent: {max_rounds: 5, approval: allow}\ntick: {schedules: ['0 8 * * *']}\n",
    )
    extra = write(tmp_path / "extra.yaml", "agent: {max_rounds: 7}\ntick: {schedules: []}\n")
    config = load(extra, home)
    assert config.agent.max_rounds == 7
    assert config.agent.approval == "allow"  # mapping merged key by key
    assert config.tick.schedules == []  # a list replaces
    assert config.sources[-1] == str(extra)


def test_unknown_key_names_file_path_and_suggestion(home, tmp_path):
    bad = write(tmp_path / "bad.yaml", "platforms:\n  slack:\n    bot_tokn: x\n")
    with pytest.raises(ConfigError) as err:
        load(bad, home)
    message = str(err.value)
    assert str(bad) in message and "platforms.slack.bot_tokn" in message
    assert "did you mean 'bot_token'" in message


@pytest.mark.parametrize(
    "text,path,expected",
    [
        ("agent: {max_rounds: many}", "agent.max_rounds", "an integer"),
        ("agent: {approval: sometimes}", "agent.approval", "one of ask, allow, read-only"),
        ("tick: {interval: soon}", "tick.interval", "a duration"),
        ("plugins: {dirs: notalist}", "plugins.dirs", "a list"),
        ("mcp: {servers: {x: {command: a, url: http://b}}}", "mcp.servers.x", "exactly one"),
        ("tick: {deliver_to: [nowhere]}", "tick.deliver_to[0]", "platform:channel"),
        # found from outside: these loaded, then every turn stopped at once ("the turn took
        # longer than -1 s") and every MCP call "timed out after nan s"
        ("agent: {turn_timeout: -1}", "agent.turn_timeout", "not negative"),
        ("agent: {tool_timeout: -0.5}", "agent.tool_timeout", "not negative"),
        ("mcp: {servers: {weather: {timeout: .nan}}}", "mcp.servers.weather.timeout", "a duration"),
        ("tick: {interval: .NaN}", "tick.interval", "a duration"),
        # found from outside: these loaded too; then every turn stopped before its first
        # round ("Stopped after -1 rounds"), and a NaN temperature went to the provider
        ("agent: {max_rounds: 0}", "agent.max_rounds", "expected 1 to"),
        ("tick: {max_attempts: -1}", "tick.max_attempts", "expected 1 to"),
        ("llm: {temperature: .nan}", "llm.temperature", "expected 0 to 2"),
        ("llm: {temperature: 7}", "llm.temperature", "expected 0 to 2"),
        # found from outside: these loaded, `config show` and `doctor` said ok, then
        # `bothost run` exited 1 and `bothost tick` said "unexpected ScheduleError"
        ("tick: {schedules: ['0 8 * * *', '99 99 * * *']}", "tick.schedules[1]", "not a cron"),
        ("tick: {timezone: Mars/Olympus_Mons}", "tick.timezone", "unknown time zone"),
        ("tick: {quiet_hours: '22:00-25:00'}", "tick.quiet_hours", "not a time of day"),
        ("tick: {quiet_hours: 'nights'}", "tick.quiet_hours", "HH:MM-HH:MM"),
        # found from outside: start equal to end loaded and meant "never quiet", silently
        ("tick: {quiet_hours: '22:00-22:00'}", "tick.quiet_hours", "start equals end"),
        ("tick: {quiet_hours: '7:00-07:00'}", "tick.quiet_hours", "00:00-24:00"),
        # found from outside: these loaded; the server then failed with "POST ftp://x:
        # ftp://x", or with a traceback on the terminal ("Invalid IPv6 URL")
        ("mcp: {servers: {r: {url: 'ftp://x/mcp'}}}", "mcp.servers.r.url", "http:// or https://"),
        ("mcp: {servers: {r: {url: 'http://[::1/mcp'}}}", "mcp.servers.r.url", "not a URL"),
        ("mcp: {servers: {r: {url: 'https:///mcp'}}}", "mcp.servers.r.url", "with a host"),
        # a value with a space connected to host "a b" and failed as unreachable; a line
        # break was dropped unseen
        ("mcp: {servers: {r: {url: 'http://a b/mcp'}}}", "mcp.servers.r.url", "white space"),
        ('mcp: {servers: {r: {url: "http://h/\\nmcp"}}}', "mcp.servers.r.url", "white space"),
        ("mcp: {servers: {r: {url: 'http://h:99999/'}}}", "mcp.servers.r.url", "the port is"),
        (
            "mcp: {servers: {r: {url: 'https://h/mcp', headers: {X-A: \"a\\r\\nX-B: b\"}}}}",
            "mcp.servers.r.headers.X-A",
            "line break",
        ),
        # found from outside (a wheel in a fresh venv): a base_url with no scheme loaded,
        # doctor said ok to the config, then every turn failed as "cannot reach
        # 127.0.0.1:9/v1: 127.0.0.1:9/v1"; Ollama's address is often written this way
        ("llm: {provider: openai, base_url: '127.0.0.1:11434/v1'}", "llm.base_url", "http://"),
        ("llm: {provider: openai, base_url: 'localhost:11434/v1'}", "llm.base_url", "http://"),
        ("llm: {provider: anthropic, base_url: 'https://'}", "llm.base_url", "with a host"),
        ("llm: {base_url: 'http://a b/v1'}", "llm.base_url", "white space"),
        # found from outside: a number loaded as the SQLite file "5" beside the home
        ("store: {url: 5}", "store.url", "expected a string"),
        ("store: {url: 1.5}", "store.url", "expected a string"),
    ],
)
def test_type_errors_name_the_key_path(home, tmp_path, text, path, expected):
    with pytest.raises(ConfigError) as err:
        load(write(tmp_path / "c.yaml", text), home)
    assert path in str(err.value) and expected in str(err.value)
    assert str(tmp_path / "c.yaml") in str(err.value)


def test_durations_parse(home, tmp_path):
    config = load(write(tmp_path / "c.yaml", "tick: {interval: 90s, dedupe_window: 2h}\n"), home)
    assert config.tick.interval == 90 and config.tick.dedupe_window == 7200


def test_env_interpolation(home, tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_KEY", "sk-123")
    config = load(
        write(tmp_path / "c.yaml", "llm: {provider: openai, api_key: '${env:TEST_KEY}'}\n"), home
    )
    assert config.llm.api_key == "sk-123"


def test_unset_env_is_an_error_only_when_enabled(home, tmp_path, monkeypatch):
    monkeypatch.delenv("NOPE_TOKEN", raising=False)
    off = "platforms: {slack: {enabled: false, bot_token: '${env:NOPE_TOKEN}'}}\n"
    assert load(write(tmp_path / "a.yaml", off), home).platforms.slack.bot_token is None
    on = "platforms: {slack: {enabled: true, bot_token: '${env:NOPE_TOKEN}'}}\n"
    with pytest.raises(
        ConfigError, match="platforms.slack.bot_token: environment variable NOPE_TOKEN"
    ):
        load(write(tmp_path / "b.yaml", on), home)


def test_secrets_are_masked():
    masked = mask_secrets(
        {
            "llm": {"api_key": "sk-1", "model": "m"},
            "mcp": {
                "servers": {"r": {"headers": {"Authorization": "Bearer x"}, "env": {"A": "b"}}}
            },
        }
    )
    assert masked["llm"] == {"api_key": "***", "model": "m"}
    assert masked["mcp"]["servers"]["r"]["headers"] == {"Authorization": "***"}
    assert masked["mcp"]["servers"]["r"]["env"] == {"A": "***"}


def test_a_number_under_a_secret_name_is_masked_too(home, tmp_path):
    # found from outside: `config show` printed `api_key: 123456789012` and
    # `bot_token: 99887766` as written: YAML read them as numbers, and only strings were
    # masked (the config itself takes them as the strings they spell)
    text = (
        "llm: {provider: openai, api_key: 123456789012}\n"
        "platforms: {slack: {enabled: false, bot_token: 99887766, signing_secret: 3.14159}}\n"
    )
    shown = run_bothost("config", "show", config=write(tmp_path / "c.yaml", text), home=home)
    assert shown.returncode == 0, shown.stderr
    for value in ("123456789012", "99887766", "3.14159"):
        assert value not in shown.stdout
    assert "api_key: '***'" in shown.stdout and "bot_token: '***'" in shown.stdout
    assert mask_secrets({"agent": {"max_rounds": 8, "password": False}}) == {
        "agent": {"max_rounds": 8, "password": False}
    }


def test_a_top_level_x_key_holds_an_anchor_and_is_otherwise_ignored(home, tmp_path):
    # found from outside: `x-common: &c {...}` to share settings through `<<: *c` was
    # refused as an unknown key, with no word on how to hold an anchor
    text = (
        "x-common: &c {timeout: 30s, env: {LOG_LEVEL: debug}}\n"
        "mcp:\n  servers:\n    a: {<<: *c, command: echo}\n    b: {<<: *c, command: cat}\n"
    )
    config = load(write(tmp_path / "c.yaml", text), home)
    assert config.mcp.servers["a"].timeout == 30 and config.mcp.servers["b"].command == "cat"
    assert config.mcp.servers["b"].env == {"LOG_LEVEL": "debug"}
    assert "x-common" not in config.raw


def test_an_unknown_top_level_key_says_how_to_hold_an_anchor(home, tmp_path):
    with pytest.raises(ConfigError) as err:
        load(write(tmp_path / "c.yaml", "common: &c {timeout: 30s}\n"), home)
    assert "common: unknown key" in str(err.value) and "x-common" in str(err.value)


def test_cli_config_error_exits_2_and_writes_nothing(tmp_path):
    home = tmp_path / "fresh-home"
    bad = write(tmp_path / "bad.yaml", "llm:\n  provder: openai\n")
    result = run_bothost(
        "chat", "-m", "hi", home=home, config=bad, env={**os.environ, "BOTHOST_HOME": str(home)}
    )
    assert result.returncode == 2
    assert "llm.provder" in result.stderr and "did you mean 'provider'" in result.stderr
    assert not home.exists()


def test_the_packaged_defaults_parsed_twin_is_current():
    # every command reads config/bothost.yaml; its twin spares PyYAML's import and parse
    # (issue 19). Edited the YAML? `python -m bothost.config.file config/bothost.yaml`
    from bothost.config import packaged_default_path
    from bothost.config.file import make_twin, twin_path

    path = packaged_default_path()
    assert json.loads(twin_path(path).read_text("utf-8")) == make_twin(path), (
        "config/bothost.yaml.json is stale: run python -m bothost.config.file config/bothost.yaml"
    )


def test_a_twin_is_read_only_while_it_was_made_from_the_same_bytes(tmp_path):
    from bothost.config.file import make_twin, read_yaml, twin_path

    path = tmp_path / "defaults.yaml"
    path.write_text("llm: {provider: offline}\n")
    twin = make_twin(path)
    twin["data"] = {"llm": {"provider": "from-the-twin"}}  # tells which one was read
    twin_path(path).write_text(json.dumps(twin))
    assert read_yaml(path, twin=True) == {"llm": {"provider": "from-the-twin"}}
    assert read_yaml(path) == {"llm": {"provider": "offline"}}  # only where asked for
    path.write_text("llm: {provider: openai}\n")  # edited since: the twin is stale
    assert read_yaml(path, twin=True) == {"llm": {"provider": "openai"}}
    twin_path(path).write_text("{not json")
    assert read_yaml(path, twin=True) == {"llm": {"provider": "openai"}}


@pytest.mark.parametrize("text", ["tick:\n\tinterval: 5m\n", "platforms:\n  web:\n  \tport: 5\n"])
def test_a_tab_that_indents_is_named_with_the_fix(tmp_path, text):
    # found from outside: "found character that cannot start any token" named no tab
    from bothost.config.file import read_yaml

    path = tmp_path / "bothost.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        read_yaml(path)
    assert "a tab" in str(raised.value) and "indent with spaces" in str(raised.value)
