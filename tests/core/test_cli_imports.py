"""A one-shot command imports what it uses (issue 19).

``bothost chat -m help`` took 1.9 s, a third of it importing aiohttp and slack_bolt for a
listener and a Slack connection the command never opens. Import time itself is measured by
``bench/cli_start.py``; here the modules are checked, which does not depend on the machine.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers import run_bothost

NOT_FOR_A_TERMINAL_CHAT = (
    *("aiohttp", "slack_bolt", "slack_sdk", "psycopg", "croniter"),
    *("openai", "anthropic"),  # LLM SDKs: `help` is the offline agent's, no model is asked
    *("googleapiclient", "paramiko"),  # the bundled servers' own: they run in their process
    "cryptography",  # OAuth client assertions, for an MCP login the chat does not make
    "sqlite_utils",  # the bench's peer; bothost uses none of it
    "yaml",  # the packaged defaults are read from their parsed twin (bothost.config.file)
)
# the commands `chat` is not: their modules load when one of them runs (or --help lists them)
OTHER_COMMANDS = (
    "bothost.cli.db",
    "bothost.cli.events",
    "bothost.cli.mcp",
    "bothost.cli.mcp_install",
    "bothost.cli.rules",
    "bothost.cli.usage",
)


def imported(tmp_path, *argv: str, full: bool = False, status: int | None = 0) -> set[str]:
    """Top-level modules imported by ``bothost ARGV`` (from ``python -X importtime``); every
    dotted name with `full`. The command must exit with `status` (None: any)."""
    # started by hand, not with tests.helpers.run_bothost: the interpreter's own option
    # (-X importtime) is what the test reads
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "bothost", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "BOTHOST_HOME": str(tmp_path / "home")},
    )
    assert status is None or done.returncode == status, done.stderr[-2000:]
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            names.add(name if full else name.split(".")[0])
    return names


def test_terminal_chat_imports_no_http_or_slack_stack(tmp_path):
    modules = imported(tmp_path, "chat", "-m", "help")
    assert "bothost" in modules  # the parsing found the imports at all
    assert not modules & set(NOT_FOR_A_TERMINAL_CHAT), sorted(modules)


def test_terminal_chat_imports_no_other_command(tmp_path):
    modules = imported(tmp_path, "chat", "-m", "help", full=True)
    assert "bothost.cli.core" in modules
    assert not modules & set(OTHER_COMMANDS), sorted(modules & set(OTHER_COMMANDS))


# the platforms a terminal chat does not use: registered as bothost.platform.Deferred, made
# (their modules imported) only when something uses them
OTHER_PLATFORMS = (
    "bothost.plugins.slack.platform",
    "bothost.plugins.web.platform",
    "bothost.plugins.web.outbound",
)


def test_terminal_chat_imports_no_platform_but_the_console(tmp_path):
    modules = imported(tmp_path, "chat", "-m", "help", full=True)
    assert "bothost.plugins.console.platform" in modules
    assert not modules & set(OTHER_PLATFORMS), sorted(modules & set(OTHER_PLATFORMS))


def test_terminal_chat_makes_no_platform_its_deliver_to_names(tmp_path):
    # the config's check of tick.deliver_to targets asked each named platform for its
    # target_problem, and so made a Deferred Slack or webhook platform at every command
    config = tmp_path / "c.yaml"
    config.write_text(
        "tick: {deliver_to: ['slack:C0123', 'webhook:ops', 'web:briefings']}\n"
        "platforms: {webhook: {targets: {ops: {url: 'https://ops.example/in'}}}}\n"
    )
    modules = imported(tmp_path, "--config", str(config), "chat", "-m", "help", full=True)
    assert "bothost.plugins.console.platform" in modules
    assert not modules & set(OTHER_PLATFORMS), sorted(modules & set(OTHER_PLATFORMS))


# the MCP client's own stack: a command's host starts a server only when a turn needs its
# tools (bothost.mcp.manager's on_demand), and the first server to start imports it
MCP_CLIENT = ("bothost.mcp.session", "bothost.mcp.stdio", "bothost.mcp.inbound")


def test_a_turn_without_tools_imports_no_mcp_client(tmp_path):
    modules = imported(tmp_path, "chat", "-m", "help", full=True)
    assert "bothost.mcp.manager" in modules  # the groups table lists the servers
    assert not modules & set(MCP_CLIENT), sorted(modules & set(MCP_CLIENT))


def test_every_command_is_still_offered_and_runs(tmp_path):
    home = tmp_path / "home"
    home.mkdir()  # `rules list` only reads: on a missing home it says so and exits 1
    env = {**os.environ, "BOTHOST_HOME": str(home)}

    def bothost(*argv: str) -> str:
        done = run_bothost(*argv, env=env, timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    listed = bothost("--help")
    for name in ("db", "mcp", "events", "tick", "briefings", "rules", "usage", "chat"):
        assert f"  {name} " in listed, listed
    assert "import" in bothost("mcp", "--help")  # mcp_install's commands join the group
    assert "permission rules" in bothost("rules", "list").lower()  # a lazy command runs


def test_help_and_the_mcp_group_import_no_http_client(tmp_path):
    # --help lists every command, so it imports every command's module: `mcp install`'s
    # registry client brought aiohttp (~0.15 s) into every --help and `mcp list`
    for argv in (("--help",), ("mcp", "--help")):
        modules = imported(tmp_path, *argv)
        assert "click" in modules  # the parsing found the imports at all
        assert "aiohttp" not in modules, argv


def test_doctor_offline_does_not_load_the_models_sdk(tmp_path):
    # the host built its LLM provider at once: with anthropic configured, `doctor` (which
    # builds a host to check the MCP servers) imported the SDK, 3.5 s of CPU, for a model
    # it never asks offline; the provider is now built by the first turn
    config = tmp_path / "anthropic.yaml"
    config.write_text("llm: {provider: anthropic, model: claude-x, api_key: sk-not-real}\n")
    modules = imported(tmp_path, "--config", str(config), "doctor", "--offline", status=None)
    assert "bothost" in modules
    assert "anthropic" not in modules


def test_reading_the_config_imports_no_mcp_client(tmp_path):
    # the config's loader checks roots with bothost.mcp.roots; the package once imported its whole
    # client (session, inbound, importlib.metadata) with it, for every command that reads
    # the config
    modules = imported(tmp_path, "config", "show", full=True)
    assert "bothost.mcp.roots" in modules
    assert not modules & {"bothost.mcp.session", "bothost.mcp.inbound", "bothost.mcp.content"}
