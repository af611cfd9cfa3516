"""Every hook is exercised: a plugin implementing all of them (tests/core/plugins/every_hook.py)
goes through the command line, ``bothost doctor`` and one host's life (start, an HTTP request,
a message through its own platform, an event, a tick, stop), and each hook in hookspecs.py is
seen called with the arguments its spec names, each of its documented type (datasette's
check that every hook is called by its test plugin)."""

from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path

import aiohttp
from click.testing import CliRunner

from bothost import hookspecs
from bothost.cli import cli
from bothost.cli.runtime import Runtime
from bothost.models import Address, IncomingMessage

PLUGINS = Path(__file__).resolve().parent / "plugins"
CONFIG = f"""
plugins: {{dirs: ['{PLUGINS}']}}
platforms: {{web: {{port: 0}}, console: {{enabled: false}}}}
mcp: {{servers: {{weather: {{enabled: false}}}}}}
tick: {{deliver_to: ['every:room']}}
every_hook: {{greeting: bonjour}}
"""


def specs() -> dict[str, list[str]]:
    return {
        name: list(inspect.signature(obj).parameters)
        for name, obj in vars(hookspecs).items()
        if inspect.isfunction(obj) and hasattr(obj, "bothost_spec")
    }


async def a_host_life() -> None:
    runtime = Runtime()
    host = runtime.host()
    try:
        await host.start(mcp=False, tick=False)
        async with aiohttp.ClientSession() as client:
            async with client.get(f"http://127.0.0.1:{host.http.port}/every-hook") as response:
                assert await response.text() == "bonjour"  # the plugin's route, its section
        platform = host.platform("every")
        message = IncomingMessage(Address("every", "room"), "everyhook shout", user="u1")
        reply = await host.handle_message(message, platform=platform)
        assert "SHOUT" in reply.text  # its offline command called its tool, as it allowed
        assert await host.ingest_event("every", "event/ping", {"summary": "ping"}) is not None
        await host.tick_now("test")
        assert [len(b.items) for b in platform.briefings] == [1]
    finally:
        await host.stop()
        runtime.close()


def test_each_hook_is_called_with_its_documented_arguments(home, tmp_path, monkeypatch):
    log = tmp_path / "hooks.jsonl"
    monkeypatch.setenv("EVERY_HOOK_LOG", str(log))
    (home / "bothost.yaml").write_text(CONFIG, "utf-8")
    runner = CliRunner()
    said = runner.invoke(cli, ["every-hook"], catch_exceptions=False)
    assert said.output == "every hook\n"
    doctor = runner.invoke(cli, ["doctor", "--offline"], catch_exceptions=False)
    assert "greeting 'bonjour'" in doctor.output
    asyncio.run(a_host_life())

    seen: dict[str, set[tuple[str, ...]]] = {}
    wrong = []
    for line in log.read_text("utf-8").splitlines():
        call = json.loads(line)
        seen.setdefault(call["hook"], set()).add(tuple(call["typed"]))
        wrong += [(call["hook"], name) for name, ok in call["typed"].items() if not ok]
    assert sorted(set(specs()) - set(seen)) == []  # every hook was called
    assert {hook: {tuple(names)} for hook, names in specs().items()} == seen
    assert wrong == []


def test_the_plugin_implements_every_hook():
    """What the test above leans on: a hook added to hookspecs.py without an implementation
    here fails at once, naming it."""
    source = (PLUGINS / "every_hook.py").read_text("utf-8")
    assert [name for name in specs() if f"def {name}(" not in source] == []
