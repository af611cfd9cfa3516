"""SIGHUP and ``bothost reload`` make a running ``bothost run`` read its config at once.

The hosts here run with ``BOTHOST_CONFIG_POLL=0`` (no polling), so an edit can only have
been applied by the signal: the tests read what the host reports (``state/
config-status.json``, the command's output), never how long anything took.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time

import aiohttp
import pytest

from tests.core.test_config_reload import APPLIED, Running
from tests.fakes.llm import FakeLlm
from tests.helpers import COMMAND_SECONDS, free_port, run_bothost, until


@pytest.fixture
async def running(home, tmp_path, monkeypatch):
    monkeypatch.setenv("BOTHOST_CONFIG_POLL", "0")  # the signal alone applies an edit
    host = Running(home, tmp_path)
    await host.start()
    yield host
    host.stop()


def status(home) -> dict:
    path = home / "state" / "config-status.json"
    return json.loads(path.read_text()) if path.exists() else {}


async def first_look(running: Running) -> None:
    """The host's first look at its files (made at start, poll or not) is over."""
    reported = lambda: status(running.home)  # noqa: E731
    await until(lambda: reported().get("pid") == running.process.pid, APPLIED)
    await until(lambda: reported().get("looked_at") is not None, APPLIED)


async def reload_command(running: Running):
    return await asyncio.to_thread(
        run_bothost, "reload", home=running.home, timeout=COMMAND_SECONDS
    )


async def test_sighup_applies_an_edit_when_nothing_polls(running, home):
    await first_look(running)
    running.write(agent={"max_rounds": 7})
    sent = time.time()
    running.process.send_signal(signal.SIGHUP)
    await until(lambda: (status(home).get("looked_at") or 0) >= sent, APPLIED)
    reported = status(home)
    assert reported["applied"] == ["agent"] and reported["error"] == ""
    assert "config applied: agent" in running.log()
    assert running.process.poll() is None  # SIGHUP reloads; it does not end the host


async def test_reload_applies_says_restart_needed_and_refuses_an_invalid_edit(running, home):
    fake = await FakeLlm().start()
    try:
        fake.script = [{"text": "The model answers."}]
        await first_look(running)
        running.write(llm=fake.openai_config())
        done = await reload_command(running)
        assert (done.returncode, done.stdout) == (0, "config applied: llm\n"), done.stderr
        async with aiohttp.ClientSession() as client:
            assert await running.chat(client, "hello") == "The model answers."

        running.write(platforms={"web": {"port": free_port()}})
        done = await reload_command(running)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == [
            "nothing new to apply",
            "restart needed: platforms.web.port (restart bothost run to apply it)",
        ]

        running.write(agent={"max_rounds": "many"})
        done = await reload_command(running)
        assert done.returncode == 1
        (line,) = done.stderr.splitlines()
        assert line.startswith("bothost: config not applied: ") and "agent.max_rounds" in line
        assert "the running config stays" in line
    finally:
        await fake.stop()


async def test_reload_with_no_host_on_this_home_exits_1(home):
    done = await asyncio.to_thread(run_bothost, "reload", home=home, timeout=COMMAND_SECONDS)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"bothost: no host runs on {home}: start it with `bothost run`\n"
