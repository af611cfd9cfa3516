"""Environment references written the shell's way, and unset names with a typo (issue 39).

Found from outside: ``api_key: ${OPENAI_API_KEY}`` was sent to the provider as the key, and
its refusal blamed ``llm.base_url``; ``${env:OPENAI_API_KEY}`` unset while OPENAI_APIKEY was
set said only "not set".
"""

from __future__ import annotations

import pytest

from bothost.config import ConfigError, load_core


def load_text(home, tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return load_core(path, home)


@pytest.mark.parametrize(
    "value, name",
    [
        ("'${OPENAI_API_KEY}'", "OPENAI_API_KEY"),
        ("$OPENAI_API_KEY", "OPENAI_API_KEY"),
        ("'Bearer ${TOKEN}'", "TOKEN"),
    ],
)
def test_a_shell_style_reference_is_refused_naming_the_key_and_the_way_to_write_it(
    home, tmp_path, monkeypatch, value, name
):
    monkeypatch.setenv(name, "sk-secret-value")
    with pytest.raises(ConfigError) as refused:
        load_text(home, tmp_path, f"llm: {{provider: openai, model: m, api_key: {value}}}\n")
    message = str(refused.value)
    assert "c.yaml: llm.api_key: " in message
    assert f"write ${{env:{name}}}" in message
    assert "sk-secret-value" not in message


def test_dollar_text_that_names_no_variable_stays_as_written(home, tmp_path):
    config = load_text(
        home,
        tmp_path,
        "llm: {provider: openai, model: m, api_key: 'pa$$word-$5-a$b', base_url: 'http://h/$x'}\n",
    )
    assert config.llm.api_key == "pa$$word-$5-a$b"


def test_a_shells_arguments_keep_their_own_references(home, tmp_path):
    config = load_text(
        home,
        tmp_path,
        "mcp: {servers: {weather: {enabled: false},"
        " wrapped: {command: /bin/sh, args: ['-c', 'exec srv --root $HOME/${SUB}']}}}\n",
    )
    assert config.mcp.servers["wrapped"].args[1] == "exec srv --root $HOME/${SUB}"
    with pytest.raises(ConfigError, match=r"mcp.servers.direct.args\[1\]: .*write \$\{env:HOME\}"):
        load_text(
            home,
            tmp_path,
            "mcp: {servers: {weather: {enabled: false},"
            " direct: {command: srv, args: ['--root', '$HOME']}}}\n",
        )


@pytest.mark.parametrize("typo", ["OPENAI_APIKEY", "OPEN_API_KEY", "openai_api_key"])
def test_an_unset_name_close_to_a_set_one_says_which(home, tmp_path, monkeypatch, typo):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv(typo, "sk-secret-value")
    with pytest.raises(ConfigError) as refused:
        load_text(home, tmp_path, "llm: {provider: openai, api_key: '${env:OPENAI_API_KEY}'}\n")
    message = str(refused.value)
    assert "environment variable OPENAI_API_KEY is not set; did you mean " + typo + "?" in message
    assert "sk-secret-value" not in message


def test_an_unset_name_like_no_set_one_suggests_nothing(home, tmp_path, monkeypatch):
    monkeypatch.delenv("ZQX_UNLIKELY_TOKEN", raising=False)
    with pytest.raises(ConfigError) as refused:
        load_text(home, tmp_path, "llm: {provider: openai, api_key: '${env:ZQX_UNLIKELY_TOKEN}'}\n")
    assert "did you mean" not in str(refused.value)
