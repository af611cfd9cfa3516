"""Core's ``http:`` section and its older spelling ``platforms.web.{host,port,token}``.

Both spellings bind the real listener, ``run`` and ``doctor`` take both, two spellings that
disagree are a config error naming both, and the token check names the key as written.
"""

import asyncio
import signal

import aiohttp
import pytest

from bothost.config import ConfigError, load
from bothost.config.check import check_serving
from bothost.hooks.discovery import load_plugins, new_plugin_manager
from bothost.host.host import Host
from tests.helpers import bothost_process, free_port, run_bothost

OTHERS = "mcp: {servers: {weather: {enabled: false}}}\nplatforms: {console: {enabled: false}}\n"


def spelled(spelling: str, **keys: object) -> str:
    """YAML setting ``keys`` under ``http:`` or under the alias ``platforms.web``."""
    inner = ", ".join(f"{k}: {v}" for k, v in keys.items())
    if spelling == "http":
        return OTHERS + f"http: {{{inner}}}\n"
    return OTHERS.replace(
        "console: {enabled: false}", f"console: {{enabled: false}}, web: {{{inner}}}"
    )


@pytest.mark.parametrize("spelling", ["http", "platforms.web"])
async def test_run_listens_on_the_port_either_spelling_names(tmp_path, home, spelling):
    port = free_port()
    config = tmp_path / "c.yaml"
    config.write_text(spelled(spelling, port=port))
    process = await bothost_process(home, config, "run")
    banner = await asyncio.wait_for(process.stderr.readline(), 30)
    assert banner.decode().startswith(f"bothost is running: http://127.0.0.1:{port}/"), banner
    async with aiohttp.ClientSession() as client:
        async with client.get(f"http://127.0.0.1:{port}/healthz") as response:
            assert response.status == 200
    process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(process.wait(), 30) == 0


@pytest.mark.parametrize("spelling", ["http", "platforms.web"])
async def test_a_host_in_code_listens_where_either_spelling_says(tmp_path, home, spelling):
    port = free_port()
    config = tmp_path / "c.yaml"
    config.write_text(spelled(spelling, port=port))
    pm = new_plugin_manager()
    load_plugins(pm, [], [])
    host = Host(load(config, home, pm), home, pm)
    await host.start(mcp=False, tick=False)
    try:
        assert host.http.port == port
        async with aiohttp.ClientSession() as client:
            async with client.get(f"http://127.0.0.1:{port}/healthz") as response:
                assert response.status == 200
    finally:
        await host.stop()


@pytest.mark.parametrize("spelling", ["http", "platforms.web"])
def test_doctor_accepts_either_spelling(tmp_path, home, spelling):
    config = tmp_path / "c.yaml"
    config.write_text(spelled(spelling, port=free_port()))
    result = run_bothost("doctor", home=home, config=config, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok  web port" in result.stdout, result.stdout


@pytest.mark.parametrize("command", [["doctor"], ["run"]])
def test_two_spellings_that_disagree_are_a_config_error(tmp_path, home, command):
    config = tmp_path / "c.yaml"
    config.write_text(
        OTHERS.replace("console: {enabled: false}", "console: {enabled: false}, web: {port: 8002}")
        + "http: {port: 8001}\n"
    )
    result = run_bothost(*command, home=home, config=config, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"config error: {config}: platforms.web.port (8002) and http.port (8001)" in (
        result.stderr
    ), result.stderr
    assert not (home / "bothost.db").exists()  # a config error writes nothing


def test_two_spellings_that_agree_are_one_value(tmp_path, home):
    config = tmp_path / "c.yaml"
    config.write_text(
        OTHERS.replace("console: {enabled: false}", "console: {enabled: false}, web: {port: 8002}")
        + "http: {port: 8002, host: localhost}\n"
    )
    loaded = load(config, home)
    assert (loaded.http.port, loaded.http.host) == (8002, "localhost")
    assert loaded.platforms.web.enabled is True  # the web plugin keeps its own keys


def test_a_later_source_overrides_an_earlier_one_in_either_spelling(tmp_path, home):
    (home / "bothost.yaml").write_text("http: {port: 8001}\n")
    config = tmp_path / "c.yaml"
    config.write_text(spelled("platforms.web", port=8003))
    assert load(config, home).http.port == 8003


def test_a_wrong_alias_value_is_named_as_written(tmp_path, home):
    config = tmp_path / "c.yaml"
    config.write_text(spelled("platforms.web", port=99999))
    with pytest.raises(ConfigError, match=r"platforms\.web\.port: expected 0 to 65535"):
        load(config, home)


@pytest.mark.parametrize("spelling", ["http", "platforms.web"])
def test_a_non_loopback_bind_needs_a_token_in_either_spelling(tmp_path, home, spelling):
    config = tmp_path / "c.yaml"
    config.write_text(spelled(spelling, host="0.0.0.0", port=0))
    with pytest.raises(ConfigError) as refused:
        check_serving(load(config, home))
    assert f"{config}: {spelling}.host: binding 0.0.0.0 (not loopback) requires " in str(
        refused.value
    )
    assert f"requires {spelling}.token" in str(refused.value)
    config.write_text(spelled(spelling, host="0.0.0.0", port=0, token="s3cret-token"))
    loaded = load(config, home)
    check_serving(loaded)  # a token in either spelling satisfies it
    assert loaded.http.token == "s3cret-token"


def test_a_token_under_the_other_spelling_satisfies_the_check(tmp_path, home):
    config = tmp_path / "c.yaml"
    config.write_text(
        OTHERS.replace(
            "console: {enabled: false}", "console: {enabled: false}, web: {token: s3cret-token}"
        )
        + "http: {host: 0.0.0.0, port: 0}\n"
    )
    check_serving(load(config, home))
