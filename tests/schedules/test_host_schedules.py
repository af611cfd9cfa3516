"""A running ``bothost run`` fires what ``bothost schedule add`` stored, on web, a webhook
target and Slack (the fake); a job due while no host ran fires once, late, at the next start.

The host and the CLI are real processes sharing the home's SQLite file: nothing tells the
host that a job was added, its scheduler finds it in the store.
"""

from __future__ import annotations

import asyncio
import getpass
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from aiohttp import web
from bothost.plugins.web.signing import verify

from bothost.schedules import add_job
from bothost.store import Store, core_migrations
from tests.helpers import bothost_process, free_port, run_bothost, serve_app
from tests.slack.fake_slack import APP_TOKEN, BOT_TOKEN, FakeSlack

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_" + "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
WAIT = 60.0  # seconds for a host to start or a job to arrive on a loaded machine


class Receiver:
    """A webhook target on 127.0.0.1 that checks each signature and keeps the bodies."""

    def __init__(self) -> None:
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        msg_id = verify(SECRET, request.headers, body)
        self.received.append((msg_id, json.loads(body)))
        return web.json_response({"ok": True})

    async def start(self) -> Receiver:
        app = web.Application()
        app.router.add_post("/hook", self.handle)
        self.runner, base = await serve_app(app)
        self.url = f"{base}/hook"
        return self

    async def stop(self) -> None:
        await self.runner.cleanup()

    def texts(self) -> list[str]:
        return [body["text"] for _, body in self.received]


def host_config(port: int, receiver: Receiver, slack: FakeSlack) -> dict[str, Any]:
    return {
        "llm": {"provider": "offline"},
        "tick": {"enabled": False},  # no briefings: what arrives is the scheduler's
        "platforms": {
            "web": {"host": "127.0.0.1", "port": port},
            "console": {"enabled": False},
            "webhook": {"secret": SECRET, "targets": {"ops": {"url": receiver.url}}},
            "slack": {
                "enabled": True,
                "mode": "socket",
                "bot_token": BOT_TOKEN,
                "app_token": APP_TOKEN,
                "signing_secret": "s3cret",
                "api_url": slack.api_url,
            },
        },
    }


class Running:
    """One ``bothost run`` on ``home`` with ``config``, and the CLI beside it."""

    def __init__(self, home: Path, config: Path, port: int) -> None:
        self.home, self.config, self.port = home, config, port
        self.process: asyncio.subprocess.Process | None = None
        self.log = home.parent / "host.log"

    async def start(self, **env: str) -> None:
        with self.log.open("ab") as stderr:
            self.process = await bothost_process(
                self.home, self.config, "run", stderr=stderr, PYTHONPATH=str(ROOT), **env
            )
        async with aiohttp.ClientSession() as client:
            await wait_for(lambda: self.healthy(client), "the host to serve")

    async def healthy(self, client: aiohttp.ClientSession) -> bool:
        try:
            async with client.get(f"http://127.0.0.1:{self.port}/healthz") as response:
                return response.status == 200
        except aiohttp.ClientError:
            return False

    async def stop(self) -> None:
        if self.process is None or self.process.returncode is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            async with asyncio.timeout(30):
                await self.process.wait()
        except TimeoutError:
            self.process.kill()
            await self.process.wait()

    async def cli(self, *args: str) -> str:
        env = {**os.environ, "BOTHOST_HOME": str(self.home), "PYTHONPATH": str(ROOT)}
        done = await asyncio.to_thread(run_bothost, *args, config=self.config, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    async def web_briefings(self) -> list[str]:
        async with aiohttp.ClientSession() as client:
            async with client.get(f"http://127.0.0.1:{self.port}/api/dashboard") as response:
                return [b["text"] for b in (await response.json())["briefings"]]


async def wait_for(check: Any, what: str, timeout: float = WAIT) -> None:
    """Poll ``check`` (sync or async) until true, at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        outcome = check()
        if asyncio.iscoroutine(outcome):
            outcome = await outcome
        if outcome:
            return
        assert time.monotonic() < deadline, f"waited {timeout:g} s for {what}"
        await asyncio.sleep(0.2)


@pytest.fixture
async def setup(home, tmp_path):
    receiver = await Receiver().start()
    slack = FakeSlack()
    await slack.start()
    port = free_port()
    config = tmp_path / "bothost.yaml"
    config.write_text(yaml.safe_dump(host_config(port, receiver, slack)))
    host = Running(home, config, port)
    yield host, receiver, slack
    await host.stop()
    await slack.stop()
    await receiver.stop()


def slack_texts(slack: FakeSlack, channel: str) -> list[str]:
    return [m.get("text", "") for m in slack.messages.get(channel, [])]


async def test_reminders_added_by_the_cli_fire_on_web_a_webhook_and_slack(setup):
    host, receiver, slack = setup
    await host.start()
    for target in ("web:briefings", "webhook:ops", "slack:C0OPS"):
        said = await host.cli("schedule", "add", "--in", "2s", "--to", target, "call Ana")
        assert said.startswith("Scheduled #") and f"to {target}." in said
    await wait_for(lambda: receiver.texts() == ["Reminder: call Ana"], "the webhook")
    await wait_for(lambda: slack_texts(slack, "C0OPS") == ["Reminder: call Ana"], "Slack")

    async def on_web() -> bool:
        return "Reminder: call Ana" in await host.web_briefings()

    await wait_for(on_web, "the web dashboard")
    listed = json.loads(await host.cli("schedule", "list", "--json", "--all"))
    assert [j["status"] for j in listed] == ["done", "done", "done"]
    assert {j["owner"] for j in listed} == {f"console:{getpass.getuser()}"}


async def test_a_cancelled_reminder_never_fires(setup):
    host, receiver, _ = setup
    await host.start()
    said = await host.cli("schedule", "add", "--in", "4s", "--to", "webhook:ops", "not this")
    job_id = said.split("#", 1)[1].split(":", 1)[0]
    await host.cli("schedule", "add", "--in", "6s", "--to", "webhook:ops", "but this")
    assert "Cancelled #" in await host.cli("schedule", "cancel", job_id)
    await wait_for(lambda: receiver.texts() == ["Reminder: but this"], "the later reminder")


async def test_a_job_due_while_no_host_ran_fires_once_late_at_the_next_start(setup):
    host, receiver, _ = setup
    # made yesterday for 09:00 this morning (UTC), while no bothost was running
    now = time.time()
    due = now - 3 * 3600
    store = Store(host.home / "bothost.db", core_migrations())
    try:
        store.call(
            lambda db: add_job(
                db,
                "web:ana",
                "webhook:ops",
                "message",
                "call Ana",
                at=due,
                tz="UTC",
                now=due - 86400,
            )
        )
    finally:
        store.close()
    await host.start()
    # 09:00 when it was today; with its day when it was yesterday (a run between 00:00 and
    # 03:00 UTC): the line names the day as a person reads it
    same_day = time.gmtime(due)[:3] == time.gmtime()[:3]
    when = time.strftime("%H:%M" if same_day else "%a %Y-%m-%d %H:%M", time.gmtime(due))
    late = f"Reminder (late, bothost was not running at {when}): call Ana"
    await wait_for(lambda: receiver.texts() == [late], "the late reminder")
    listed = json.loads(await host.cli("schedule", "list", "--json", "--all"))
    assert [j["status"] for j in listed] == ["done"]
    await host.stop()
    await host.start()  # a second start fires nothing again
    await host.cli("schedule", "add", "--in", "2s", "--to", "webhook:ops", "marker")
    await wait_for(lambda: len(receiver.texts()) == 2, "the marker")
    assert receiver.texts() == [late, "Reminder: marker"]


async def test_a_host_killed_after_sending_sends_the_job_again_after_a_restart(setup):
    host, receiver, _ = setup
    await host.start(BOTHOST_FAULT_KILL_AT="job-sent")  # dies before recording the fire
    await host.cli("schedule", "add", "--in", "2s", "--to", "webhook:ops", "call Ana")
    assert host.process is not None
    await wait_for(lambda: host.process.returncode is not None, "the kill")
    assert receiver.texts() == ["Reminder: call Ana"]
    await host.start()
    # at least once: the same job again (late by now, or not), and then it is done
    await wait_for(lambda: len(receiver.texts()) == 2, "the second copy")
    assert receiver.texts()[1].endswith("call Ana")
    [first_id, again_id] = [msg_id for msg_id, _ in receiver.received]
    assert first_id == again_id and first_id.startswith("job_")  # the receiver can drop it
    listed = json.loads(await host.cli("schedule", "list", "--json", "--all"))
    assert [j["status"] for j in listed] == ["done"]
