"""docs/plugins.md: registration hooks are "called once at startup" — once per command."""

from __future__ import annotations

import json

import pytest

from tests.helpers import ONLY_WEB, plugin_config, run_bothost

COUNTING = """\
import json
import os

from bothost.hookspecs import hookimpl

LOG = {log!r}


def called(hook):
    with open(LOG, "a", encoding="utf-8") as out:
        out.write(json.dumps([os.getpid(), hook]) + "\\n")


class Quiet:
    name = "quiet"

    def enabled(self, host):
        return False

    async def start(self, host):
        pass

    async def stop(self):
        pass

    async def send(self, address, text):
        pass

    async def send_briefing(self, address, briefing):
        pass


@hookimpl
def register_config(register):
    called("register_config")


@hookimpl
def register_platforms(register):
    called("register_platforms")
    register(Quiet())


@hookimpl
def register_llm_providers(register):
    called("register_llm_providers")


@hookimpl
def register_tools(register):
    called("register_tools")


@hookimpl
def register_migrations(register):
    called("register_migrations")
"""

HOOKS = [
    "register_config",
    "register_platforms",
    "register_llm_providers",
    "register_tools",
    "register_migrations",
]


@pytest.mark.parametrize(
    "command", [("chat", "-m", "help"), ("tick",), ("doctor", "--offline")], ids=" ".join
)
def test_each_registration_hook_is_called_once_per_command(home, tmp_path, command):
    # found from outside, as a plugin author: one `bothost chat -m help` called
    # register_platforms and register_llm_providers twice (the config's check of names, then
    # the host), so a platform registered two objects and the config judged another one
    log = tmp_path / "calls.jsonl"
    counting = COUNTING.format(log=str(log))
    config = plugin_config(tmp_path, {"counting.py": counting}, ONLY_WEB)
    result = run_bothost(*command, config=config)
    assert result.returncode == 0, result.stderr
    calls = [json.loads(line)[1] for line in log.read_text("utf-8").splitlines()]
    assert sorted(calls) == sorted(HOOKS), calls
