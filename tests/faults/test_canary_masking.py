"""The pieces the canary run relies on, one by one: masking for display, redaction of logs.

Each test puts a canary where a credential can live and checks one place that shows or
writes it: a server's target (``mcp list``, the status file, the dashboard), its start line
and stderr in its own log, ``config show``, the host log.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shlex
import sys
from pathlib import Path

import pytest
import yaml

from bothost import redact
from bothost.config import McpServerConfig, mask_secrets
from bothost.mcp.manager import McpManager, status_path
from bothost.mcp.runner import describe
from bothost.mcp.serverlog import close_server_logger, log_path, server_logger
from tests.helpers import until

SERVER = Path(__file__).with_name("canary_server.py")


def canary(label: str) -> str:
    return f"cnry{label}{secrets.token_hex(6)}"


@pytest.mark.parametrize(
    "args,hidden",
    [
        (["--token", "VALUE"], "VALUE"),
        (["--api-key=VALUE"], "VALUE"),
        (["--password", "VALUE"], "VALUE"),
        (["--client-secret", "VALUE"], "VALUE"),
        (["-p", "VALUE"], "VALUE"),
        (["API_KEY=VALUE"], "VALUE"),
        (["GITHUB_TOKEN=VALUE"], "VALUE"),
        (["https://user:VALUE@example.com/x"], "VALUE"),
        (["https://example.com/x?access_token=VALUE&page=2"], "VALUE"),
    ],
)
def test_server_target_masks_secret_arguments(args, hidden):
    value = canary("arg")
    args = [a.replace("VALUE", value) for a in args]
    transport, target = describe(McpServerConfig(command="srv", args=["--port", "80", *args]))
    assert transport == "stdio" and value not in target and "***" in target
    assert target.startswith("srv --port 80 ")  # what is not secret stays readable


def test_server_target_masks_values_that_came_from_the_environment(monkeypatch):
    value = canary("env")
    redact.remember(
        redact.server_secrets(
            McpServerConfig(command="srv", args=["--root", "${env:CANARY_X}"]),
            environ={"CANARY_X": value},
        )
    )
    _, target = describe(McpServerConfig(command="srv", args=["--root", value]))
    assert value not in target


def test_http_target_masks_url_password_and_secret_query():
    password, key = canary("pw"), canary("key")
    _, target = describe(McpServerConfig(url=f"https://me:{password}@h.example/mcp?key={key}&v=1"))
    assert password not in target and key not in target
    assert target == "https://me:***@h.example/mcp?key=***&v=1"


def test_config_show_masks_urls_args_and_secret_keys():
    values = [canary(str(i)) for i in range(6)]
    raw = {
        "llm": {"api_key": values[0], "base_url": f"https://h/v1?api_key={values[1]}"},
        "mcp": {
            "servers": {
                "a": {"command": "srv", "args": ["--token", values[2], f"PASSWORD={values[3]}"]},
                "b": {"url": f"https://u:{values[4]}@h/mcp", "headers": {"X": values[5]}},
            }
        },
        "agent": {"max_rounds": 12},
    }
    shown = json.dumps(mask_secrets(raw))
    assert not [v for v in values if v in shown]
    assert '"max_rounds": 12' in shown and "https://u:***@h/mcp" in shown


def test_redaction_of_free_text_keeps_ordinary_words():
    assert (
        redact.redact("max_tokens=4096; the token expired; Basic setup")
        == "max_tokens=4096; the token expired; Basic setup"
    )
    assert (
        redact.redact("Authorization: Bearer abcdef123 token=xyz --api-key k123456")
        == "Authorization: Bearer *** token=*** --api-key ***"
    )


def test_a_server_log_redacts_known_and_secret_shaped_values(home):
    known, shaped = canary("known"), canary("shaped")
    redact.remember([known])
    log = server_logger(home, "leaky")
    try:
        log.info("[stderr] my key is %s", known)
        log.info("[stderr] connecting with --token %s", shaped)
        log.info("[stderr] https://u:%s@example.com/", shaped)
        try:
            raise RuntimeError(f"failed with {known}")
        except RuntimeError:
            log.exception("boom")
    finally:
        close_server_logger("leaky")
    text = log_path(home, "leaky").read_text()
    assert known not in text and shaped not in text
    for line in ("my key is ***", "--token ***", ":***@", "RuntimeError: failed with ***"):
        assert line in text


def test_host_log_handlers_redact(home, tmp_path, monkeypatch):
    from bothost.config import load
    from bothost.host.logs import setup

    value = canary("llm")
    monkeypatch.setenv("CANARY_LLM", value)
    config_file = tmp_path / "c.yaml"
    config_file.write_text("llm: {provider: offline, api_key: '${env:CANARY_LLM}'}\n")
    root = logging.getLogger()
    before = {handler: list(handler.filters) for handler in root.handlers}
    try:
        setup(load(config_file, home), home)
        logging.getLogger("test.canary").warning("the key is %s", value)
    finally:
        for handler in list(root.handlers):
            if handler in before:
                handler.filters[:] = before[handler]  # pytest's own handlers, as they were
            else:
                root.removeHandler(handler)
                handler.close()
    text = (home / "logs" / "bothost.log").read_text()
    assert "the key is ***" in text and value not in text


@pytest.fixture
def store(home):
    from bothost.store import Store
    from bothost.store.migrations import core_migrations

    store = Store(home / "bothost.db", core_migrations())
    yield store
    store.close()


async def test_running_server_shows_no_secret_in_status_log_or_status_file(home, store):
    token, env_value, pw = canary("tok"), canary("env"), canary("pw")
    config = McpServerConfig(
        command=sys.executable,
        args=[str(SERVER), "--token", token, f"--password={pw}"],
        env={"CANARY_ENV": env_value},
    )
    manager = McpManager({"canary": config}, store, home)
    await manager.start(wait=30)
    try:
        await until(lambda: any(s.state == "ready" for s in manager.status()), 30)
        result = await manager.call_tool("canary", "whoami", {})
        assert not result.is_error
        shown = json.dumps([s.to_dict() for s in manager.status()])
        await until(lambda: status_path(home).exists(), 10)
        status_file = status_path(home).read_text()
    finally:
        await manager.stop()
    server_log = log_path(home, "canary").read_text()
    assert "canary server starting with" in server_log
    for where, text in (
        ("status", shown),
        ("status file", status_file),
        ("server log", server_log),
    ):
        assert not [v for v in (token, env_value, pw) if v in text], where


def test_server_env_settings_are_not_masked_but_secrets_under_plain_names_are(monkeypatch):
    """``NODE_ENV: production`` is a setting: masking it blanked every "production" in the
    logs and in ``mcp list``. A value under a name bothost does not know is still a secret,
    and so is a credential-looking value under a known setting name."""
    hidden = [
        ("APP_CONFIG", canary("plain")),  # a name bothost does not know: may be a credential
        ("NODE_ENV", canary("k9")),  # letters and digits mixed in one run: credential-shaped
        ("SERVICE_PIN", "48291736"),  # a number under a name bothost does not know
        ("API_KEY", "123456789"),  # a number under a secret name
        ("LOG_LEVEL", "ghp_" + "a1B2" * 9),  # a GitHub token under a setting name
    ]
    settings = [
        ("NODE_ENV", "production"),
        ("LOG_LEVEL", "warning"),
        ("TZ", "America/Argentina/Buenos_Aires"),
        ("DEBUG", "mcp:*,express:router"),
        ("TIMEOUT_MS", "300000"),  # a plain number under any name but a secret one
        ("VERBOSE", "true"),
    ]
    for (name, value), masked in [*((e, True) for e in hidden), *((e, False) for e in settings)]:
        config = McpServerConfig(command="srv", env={name: value})
        redact.remember(redact.server_secrets(config, environ={}))
        shown = json.dumps(mask_secrets({"mcp": {"servers": {"s": {"env": {name: value}}}}}))
        assert (value in shown) is not masked, (name, shown)
    for _, value in settings:
        _, target = describe(McpServerConfig(command="srv", args=["--x", value]))
        assert target == f"srv --x {shlex.quote(value)}"
        assert redact.redact(f"mode {value} on") == f"mode {value} on"
    referenced = McpServerConfig(command="srv", env={"NODE_ENV": "${env:NODE_ENV}"})
    assert redact.server_secrets(referenced, environ={"NODE_ENV": "production"}) == set()
    raw = {"mcp": {"servers": {"s": {"command": "srv", "env": dict(settings + hidden[:1])}}}}
    assert redact.config_secrets(raw, environ={}) == {hidden[0][1]}
    for _, value in hidden:
        assert redact.redact(f"mode {value} on") == "mode *** on"


def test_what_a_server_echoes_is_masked_in_mcp_call_events_and_briefings(home, tmp_path):
    """Found from outside: ``mcp call S dump`` printed a ``${env:…}`` argument's value, and an
    event whose summary carried it was stored and shown by ``events list --json``; only
    turns masked it."""
    from tests.helpers import run_bothost

    token = canary("tok")
    config = tmp_path / "canary.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "platforms": {"console": {"enabled": False}},
                "tick": {"deliver_to": []},
                "mcp": {
                    "servers": {
                        "weather": {"enabled": False},
                        "canary": {
                            "command": sys.executable,
                            "args": [str(SERVER), "--api-token", "${env:CANARY_API_TOKEN}"],
                        },
                    }
                },
            }
        )
    )
    env = {**os.environ, "CANARY_API_TOKEN": token}
    called = run_bothost("mcp", "call", "canary", "dump", home=home, config=config, env=env)
    assert called.returncode == 0, called.stderr
    assert "dump: args=" in called.stdout and "***" in called.stdout
    listed = run_bothost("events", "list", "--json", home=home, config=config, env=env)
    assert listed.returncode == 0 and "dumped args=" in listed.stdout, listed.stderr
    ticked = run_bothost("tick", "--json", home=home, config=config, env=env)
    assert ticked.returncode == 0 and "dumped" in ticked.stdout, ticked.stderr
    for shown in (called, listed, ticked):
        assert token not in shown.stdout + shown.stderr
