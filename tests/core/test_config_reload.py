"""A saved edit of the config file reaches a running ``bothost run`` within seconds: the
model, MCP servers; an invalid edit is one log line and the host keeps serving; what only a
restart applies is said as "restart needed: KEY" in the log, ``/healthz`` and doctor."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest
import yaml

from tests.fakes.llm import FakeLlm
from tests.helpers import COMMAND_SECONDS, deep, free_port, run_bothost, until

ECHO_SERVER = str(Path(__file__).resolve().parents[1] / "mcp_servers" / "echo_server.py")
APPLIED = 15.0  # seconds an edit may take to be applied on a loaded 2-core machine


class Running:
    """``bothost run`` of ``config`` (stderr to a file: nobody must have to read a pipe)."""

    def __init__(self, home: Path, workdir: Path) -> None:
        self.home, self.port = home, free_port()
        self.config = workdir / "bothost.yaml"
        self.data = {
            "platforms": {"web": {"port": self.port}, "console": {"enabled": False}},
            "mcp": {"servers": {"weather": {"enabled": False}}},
            "tick": {"enabled": False},
        }
        self.write()
        self.stderr = workdir / "run.stderr"
        self.process: subprocess.Popen[bytes] | None = None

    def write(self, **changes: object) -> None:
        self.data = deep(self.data, changes)
        self.config.write_text(yaml.safe_dump(self.data))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        path = self.home / "logs" / "bothost.log"
        return path.read_text() if path.exists() else ""

    async def start(self) -> None:
        with open(self.stderr, "wb") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "bothost", "--config", str(self.config), "run"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                env={**os.environ, "BOTHOST_HOME": str(self.home)},
            )
        await until(lambda: "bothost is running" in self.stderr.read_text(), 60)

    def stop(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(30) == 0

    async def chat(self, client: aiohttp.ClientSession, text: str) -> str:
        body = {"session": "reload", "text": text}
        async with client.post(self.url + "/api/chat", json=body) as response:
            return (await response.json())["reply"]

    async def health(self, client: aiohttp.ClientSession) -> dict:
        async with client.get(self.url + "/healthz") as response:
            return await response.json()


@pytest.fixture
async def running(home, tmp_path):
    host = Running(home, tmp_path)
    await host.start()
    yield host
    host.stop()


@pytest.fixture
async def fake():
    fake = await FakeLlm().start()
    yield fake
    await fake.stop()


@pytest.fixture
async def client():
    async with aiohttp.ClientSession() as session:
        yield session


async def test_a_model_added_to_the_config_answers_the_next_web_chat(running, fake, client):
    assert "No language model is configured" in await running.chat(client, "hello")
    fake.script = [{"text": "The model answers."}]
    running.write(llm=fake.openai_config())
    await until(lambda: "config applied: llm" in running.log(), APPLIED)
    assert await running.chat(client, "hello again") == "The model answers."
    assert len(fake.requests) == 1


async def test_an_invalid_edit_is_one_line_and_the_host_keeps_serving(running, fake, client):
    fake.script = [{"text": "first"}, {"text": "still the model"}]
    running.write(llm=fake.openai_config())
    await until(lambda: "config applied: llm" in running.log(), APPLIED)
    assert await running.chat(client, "one") == "first"
    running.write(agent={"max_rounds": "many"})
    await until(lambda: "config not applied" in running.log(), APPLIED)
    (line,) = [x for x in running.log().splitlines() if "config not applied" in x]
    assert "agent.max_rounds" in line and str(running.config) in line, line
    assert await running.chat(client, "two") == "still the model"  # the old config runs
    health = await running.health(client)
    assert "agent.max_rounds" in health["config"]["error"]
    running.write(agent={"max_rounds": 5})  # fixed: applied, and the error goes
    await until(lambda: "config applied: agent" in running.log(), APPLIED)
    assert (await running.health(client))["config"]["error"] == ""


async def test_a_port_change_says_restart_needed(running, client, home):
    running.write(platforms={"web": {"port": free_port()}})
    await until(lambda: "restart needed: platforms.web.port" in running.log(), APPLIED)
    health = await running.health(client)  # still served on the old port
    assert health["config"]["restart_needed"] == ["platforms.web.port"]
    doctor = await asyncio.to_thread(
        run_bothost, "doctor", "--offline", home=home, config=running.config,
        timeout=COMMAND_SECONDS,
    )  # fmt: skip
    assert "restart needed: platforms.web.port" in doctor.stdout, doctor.stdout


async def test_an_mcp_server_added_to_the_config_starts_and_removed_stops(running, client):
    echo = {"command": sys.executable, "args": [ECHO_SERVER]}
    running.write(mcp={"servers": {"echo": echo}})

    async def state() -> str | None:
        server = (await running.health(client))["mcp"].get("echo")
        return server["state"] if server else None

    async with asyncio.timeout(APPLIED):
        while await state() != "ready":
            await asyncio.sleep(0.2)
    servers = deep(running.data["mcp"]["servers"], {})
    del servers["echo"]
    running.data["mcp"]["servers"] = servers
    running.write()
    async with asyncio.timeout(APPLIED):
        while await state() is not None:
            await asyncio.sleep(0.2)


async def test_tick_and_permission_edits_apply_to_the_running_parts(home, tmp_path):
    from bothost.host.reload import reload
    from tests.helpers import make_host

    host = make_host(home, {"tick": {"interval": "15m"}})
    host.config_file = str(home.parent / "test-config.yaml")  # make_host's file
    await host.start(serve_http=False, platforms=False, mcp=False)
    try:
        ticker = host.ticker
        edited = yaml.safe_load(Path(host.config_file).read_text())
        edited["tick"] = {
            "interval": "5m",
            "deliver_to": ["web:ops"],
            "rules": [{"match": {"source": "x"}, "priority": "urgent"}],
            "lease": "10m",  # read once at start
        }
        edited["permissions"] = [{"tool": "mcp__*", "action": "deny"}]
        Path(host.config_file).write_text(yaml.safe_dump(edited))
        status = await reload(host)
        assert status.error == "" and status.restart_needed == ["tick.lease"]
        assert host.ticker is ticker and ticker.config.interval == 300
        assert ticker.config.deliver_to == ["web:ops"] and ticker.config.lease == 300
        assert host.events.config.rules[0].priority == "urgent"  # the intake's urgency
        assert [r.action for r in host.config.permissions] == ["deny"]
    finally:
        await host.stop()
